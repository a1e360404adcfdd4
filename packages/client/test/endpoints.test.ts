import { HttpApi } from "@effect/platform"
import {
  ApiKey,
  AuditEntry,
  CreateKeyInput,
  CreateProofBatchInput,
  CreateProofInput,
  CreateWebhookInput,
  Delivery,
  DeliveryAttempt,
  EventEnvelope,
  ListEventsQuery,
  Proof,
  ProofBatch,
  ProofBatchCancellation,
  ProofVerification,
  RecoverWebhookInput,
  Recovery,
  RollKeyInput,
  RotateWebhookSecretInput,
  UpdateWebhookInput,
  Webhook
} from "@mzk/core"
import {
  ApiKeyList,
  AuditLogPage,
  Circuit,
  CircuitList,
  CircuitWithKey,
  CreatedApiKey,
  CreatedWebhook,
  DeliveryAttemptList,
  EventList,
  MeteredEndpoint,
  MzkApi,
  ProofCalldata,
  ProofList,
  RecoveryList,
  RotatedWebhook,
  WebhookList,
  WebhookTest
} from "@mzk/http"
import * as client from "@mzk/client"
import { API_PREFIX, createClient, ENDPOINTS } from "@mzk/client"
import { Context, Option } from "effect"
import { describe, expect, expectTypeOf, it } from "vitest"
import type { Plain } from "./plain.js"

interface Declared {
  readonly method: string
  readonly path: string
  readonly metered: boolean
}

/** Every endpoint the server's HttpApi definition declares, as `group.name`. */
const declared = (): Record<string, Declared> => {
  const endpoints: Record<string, Declared> = {}
  HttpApi.reflect(MzkApi, {
    onGroup: () => undefined,
    onEndpoint: ({ endpoint, group, mergedAnnotations }) => {
      endpoints[`${group.identifier}.${endpoint.name}`] = {
        method: endpoint.method,
        path: endpoint.path,
        metered: Context.getOption(mergedAnnotations, MeteredEndpoint).pipe(Option.getOrElse(() => false))
      }
    }
  })
  return endpoints
}

describe("the client covers the API as the server defines it", () => {
  it("one table entry per endpoint: the same names, methods, paths and metering", () => {
    const table = Object.fromEntries(
      Object.entries(ENDPOINTS).flatMap(([group, endpoints]) =>
        Object.entries(endpoints).map(([name, e]) => [`${group}.${name}`, { method: e.method, path: API_PREFIX + e.path, metered: "metered" in e }])
      )
    )
    expect(table).toEqual(declared())
  })

  it("one client method per endpoint, under the same group and name", () => {
    const api = createClient({ baseUrl: "http://127.0.0.1:1", apiKey: "mzk_test" }) as unknown as Record<string, Record<string, unknown>>
    for (const name of Object.keys(declared())) {
      const [group, method] = name.split(".") as [string, string]
      expect(typeof api[group]?.[method], name).toBe("function")
    }
    // The only extra: polling a proof until it settles.
    const extras = Object.entries(api).flatMap(([group, methods]) =>
      Object.keys(methods).filter((m) => !(`${group}.${m}` in declared())).map((m) => `${group}.${m}`))
    expect(extras).toEqual(["proofs.wait"])
  })

  it("exports no Effect: the package's public values are plain functions, classes and data", () => {
    expect(Object.keys(client).sort()).toEqual(["API_PREFIX", "ENDPOINTS", "MzkApiError", "createClient", "parseRateLimit"])
  })

  // The types are generated from the OpenAPI document (`pnpm gen`; packages/http/test/api/contract.test.ts
  // fails while they are stale); this holds the generator's JSON Schema → TypeScript to the schemas'
  // own types, which generation cannot vouch for itself.
  it("the generated request and response types equal the server's schemas (checked by the compiler)", () => {
    type Body<S extends { readonly Type: unknown }> = Plain<S["Type"]>
    type Sent<S extends { readonly Encoded: unknown }> = Plain<S["Encoded"]>
    expectTypeOf<client.ApiKey>().toEqualTypeOf<Body<typeof ApiKey>>()
    expectTypeOf<client.CreatedApiKey>().toEqualTypeOf<Body<typeof CreatedApiKey>>()
    expectTypeOf<client.ApiKeyList>().toEqualTypeOf<Body<typeof ApiKeyList>>()
    expectTypeOf<client.CreateKeyInput>().toEqualTypeOf<Sent<typeof CreateKeyInput>>()
    expectTypeOf<client.RollKeyInput>().toEqualTypeOf<Sent<typeof RollKeyInput>>()
    expectTypeOf<client.Webhook>().toEqualTypeOf<Body<typeof Webhook>>()
    expectTypeOf<client.CreatedWebhook>().toEqualTypeOf<Body<typeof CreatedWebhook>>()
    expectTypeOf<client.WebhookList>().toEqualTypeOf<Body<typeof WebhookList>>()
    expectTypeOf<client.CreateWebhookInput>().toEqualTypeOf<Sent<typeof CreateWebhookInput>>()
    expectTypeOf<client.UpdateWebhookInput>().toEqualTypeOf<Sent<typeof UpdateWebhookInput>>()
    expectTypeOf<client.RotateWebhookSecretInput>().toEqualTypeOf<Sent<typeof RotateWebhookSecretInput>>()
    expectTypeOf<client.RotatedWebhook>().toEqualTypeOf<Body<typeof RotatedWebhook>>()
    expectTypeOf<client.DeliveryAttempt>().toEqualTypeOf<Body<typeof DeliveryAttempt>>()
    expectTypeOf<client.DeliveryAttemptList>().toEqualTypeOf<Body<typeof DeliveryAttemptList>>()
    expectTypeOf<client.Proof>().toEqualTypeOf<Body<typeof Proof>>()
    expectTypeOf<client.ProofList>().toEqualTypeOf<Body<typeof ProofList>>()
    expectTypeOf<client.ProofBatch>().toEqualTypeOf<Body<typeof ProofBatch>>()
    expectTypeOf<client.ProofBatchCancellation>().toEqualTypeOf<Body<typeof ProofBatchCancellation>>()
    expectTypeOf<client.ProofVerification>().toEqualTypeOf<Body<typeof ProofVerification>>()
    expectTypeOf<client.ProofCalldata>().toEqualTypeOf<Body<typeof ProofCalldata>>()
    expectTypeOf<client.CreateProofInput>().toEqualTypeOf<Sent<typeof CreateProofInput>>()
    expectTypeOf<client.CreateProofBatchInput>().toEqualTypeOf<Sent<typeof CreateProofBatchInput>>()
    expectTypeOf<client.Circuit>().toEqualTypeOf<Body<typeof Circuit>>()
    expectTypeOf<client.CircuitWithKey>().toEqualTypeOf<Body<typeof CircuitWithKey>>()
    expectTypeOf<client.CircuitList>().toEqualTypeOf<Body<typeof CircuitList>>()
    expectTypeOf<client.Delivery>().toEqualTypeOf<Body<typeof Delivery>>()
    expectTypeOf<client.WebhookTest>().toEqualTypeOf<Body<typeof WebhookTest>>()
    expectTypeOf<client.Recovery>().toEqualTypeOf<Body<typeof Recovery>>()
    expectTypeOf<client.RecoveryList>().toEqualTypeOf<Body<typeof RecoveryList>>()
    expectTypeOf<client.RecoverWebhookInput>().toEqualTypeOf<Sent<typeof RecoverWebhookInput>>()
    expectTypeOf<client.Event>().toEqualTypeOf<Body<typeof EventEnvelope>>()
    expectTypeOf<client.EventList>().toEqualTypeOf<Body<typeof EventList>>()
    // The query as decoded: limit a number (sent as text), the rest as sent.
    expectTypeOf<Omit<client.ListEventsQuery, "limit">>().toEqualTypeOf<Omit<Body<typeof ListEventsQuery>, "limit">>()
    expectTypeOf<client.AuditEntry>().toEqualTypeOf<Body<typeof AuditEntry>>()
    expectTypeOf<client.AuditLogPage>().toEqualTypeOf<Body<typeof AuditLogPage>>()
  })
})
