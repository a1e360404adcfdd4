import { EVENT_DATA, EVENT_TYPES as CORE_EVENT_TYPES, type EventData, type EventEnvelope } from "@mzk/core"
import { openApiDocument } from "@mzk/http"
import {
  EVENT_TYPES,
  type EventDataByType,
  type EventType,
  type MzkEvent,
  type MzkEventOf
} from "@mzk/webhooks"
import { Schema } from "effect"
import { describe, expect, expectTypeOf, it } from "vitest"
import type { Plain } from "./plain.js"

/**
 * One `data` per event type, typed with this package's types: the compiler refuses a missing or
 * unknown field, and the run below has the core's schema accept each one. With the type equalities
 * (checked by `pnpm typecheck`), the hand-written types cannot drift from what mzk sends.
 */
const SAMPLES: { readonly [T in EventType]: EventDataByType[T] } = {
  "proof.completed": {
    proof_id: "proof_01jd0000000000000000000000",
    circuit: "multiplier",
    status: "completed",
    proof_blob: "eyJwaV9hIjpbXX0=",
    public_inputs: { c: "33" },
    duration_ms: 120,
    created_at: "2026-11-22T10:00:00.000Z"
  },
  "proof.failed": {
    proof_id: "proof_01jd0000000000000000000000",
    circuit: "range",
    status: "failed",
    error: { code: "constraint_violation", message: "Assert failed" },
    public_inputs: {},
    duration_ms: 12,
    created_at: "2026-11-22T10:00:00.000Z"
  },
  "proof.expired": {
    proof_id: "proof_01jd0000000000000000000000",
    circuit: "multiplier",
    status: "expired",
    created_at: "2026-11-22T10:00:00.000Z",
    expired_at: "2026-11-29T10:00:00.000Z"
  },
  "proof.verified": {
    proof_id: "proof_01jd0000000000000000000000",
    circuit: "multiplier",
    valid: true,
    verified_at: "2026-11-22T10:00:01.000Z"
  },
  "proof.canceled": {
    proof_id: "proof_01jd0000000000000000000000",
    circuit: "merkle_membership",
    status: "canceled",
    canceled_at: "2026-11-22T10:00:02.000Z",
    created_at: "2026-11-22T10:00:00.000Z"
  },
  "key.created": {
    id: "key_01jd0000000000000000000000",
    name: "ci",
    description: null,
    scopes: ["proofs:read", "proofs:write"],
    created_at: "2026-11-22T10:00:00.000Z"
  },
  "key.revoked": { id: "key_01jd0000000000000000000000", name: "ci", revoked_at: "2026-11-22T10:00:00.000Z" },
  "key.rolled": {
    id: "key_01jd0000000000000000000001",
    name: "ci",
    scopes: ["proofs:write"],
    created_at: "2026-11-22T10:00:00.000Z",
    previous_key_id: "key_01jd0000000000000000000000",
    previous_key_expires_at: "2026-11-23T10:00:00.000Z"
  },
  "circuit.ready": {
    name: "my_circuit",
    status: "ready",
    constraints: 3,
    development_only: true,
    created_at: "2026-11-22T10:00:00.000Z"
  },
  "circuit.failed": {
    name: "my_circuit",
    status: "failed",
    error: { code: "compile_error", message: "error[P1012]", file: "main.circom", line: 3 },
    created_at: "2026-11-22T10:00:00.000Z"
  },
  "webhook.test": { webhook_id: "wh_01jd0000000000000000000000", message: "A test event for webhook wh_01jd0000000000000000000000" }
}

type JsonSchema = { $ref?: string; properties?: Record<string, JsonSchema>; required?: Array<string> }

const resolve = (schema: JsonSchema): JsonSchema => {
  if (schema.$ref === undefined) return schema
  const name = schema.$ref.replace("#/components/schemas/", "")
  return resolve((openApiDocument.components.schemas as Record<string, JsonSchema>)[name]!)
}

describe("the event types match what the server sends", () => {
  it("the same event types as the core and the served OpenAPI webhooks section, in the same order", () => {
    expect(EVENT_TYPES).toEqual(CORE_EVENT_TYPES)
    expect(Object.keys((openApiDocument as unknown as { webhooks: object }).webhooks)).toEqual([...EVENT_TYPES])
  })

  it.each(EVENT_TYPES)("%s: a sample typed with @mzk/webhooks' types decodes with the core's schema, every field known", (type) => {
    const decode = Schema.decodeUnknownSync(EVENT_DATA[type] as unknown as Schema.Schema<unknown>, { onExcessProperty: "error" })
    expect(() => decode(SAMPLES[type])).not.toThrow()
  })

  it.each(EVENT_TYPES)("%s: the OpenAPI payload's data fields are the sample's, required as they are required", (type) => {
    const webhook = (openApiDocument as unknown as { webhooks: Record<string, any> }).webhooks[type]
    const event = resolve(webhook.post.requestBody.content["application/json"].schema)
    expect(event.required).toEqual(expect.arrayContaining(["id", "type", "created_at", "data"]))
    const data = resolve(event.properties!.data!)
    const sample: object = SAMPLES[type]
    expect(Object.keys(data.properties!).sort()).toEqual(Object.keys(sample).sort())
    // Only CircuitError's file/line are optional, and they sit one level down.
    expect([...(data.required ?? [])].sort()).toEqual(Object.keys(sample).sort())
  })

  it("the data types equal the core's, field for field (checked by the compiler)", () => {
    expectTypeOf<EventDataByType["proof.completed"]>().toEqualTypeOf<Plain<EventData<"proof.completed">>>()
    expectTypeOf<EventDataByType["proof.failed"]>().toEqualTypeOf<Plain<EventData<"proof.failed">>>()
    expectTypeOf<EventDataByType["proof.expired"]>().toEqualTypeOf<Plain<EventData<"proof.expired">>>()
    expectTypeOf<EventDataByType["proof.verified"]>().toEqualTypeOf<Plain<EventData<"proof.verified">>>()
    expectTypeOf<EventDataByType["proof.canceled"]>().toEqualTypeOf<Plain<EventData<"proof.canceled">>>()
    expectTypeOf<EventDataByType["key.created"]>().toEqualTypeOf<Plain<EventData<"key.created">>>()
    expectTypeOf<EventDataByType["key.revoked"]>().toEqualTypeOf<Plain<EventData<"key.revoked">>>()
    expectTypeOf<EventDataByType["key.rolled"]>().toEqualTypeOf<Plain<EventData<"key.rolled">>>()
    expectTypeOf<EventDataByType["circuit.ready"]>().toEqualTypeOf<Plain<EventData<"circuit.ready">>>()
    expectTypeOf<EventDataByType["circuit.failed"]>().toEqualTypeOf<Plain<EventData<"circuit.failed">>>()
    expectTypeOf<EventDataByType["webhook.test"]>().toEqualTypeOf<Plain<EventData<"webhook.test">>>()
    expectTypeOf<EventType>().toEqualTypeOf<Plain<EventEnvelope["type"]>>()
    expectTypeOf<MzkEvent["type"]>().toEqualTypeOf<EventType>()
    expectTypeOf<Extract<MzkEvent, { type: "circuit.failed" }>>().toEqualTypeOf<MzkEventOf<"circuit.failed">>()
  })
})
