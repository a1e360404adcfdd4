import { FetchHttpClient } from "@effect/platform"
import { Accounts, ApiKeys } from "@mzk/core"
import { makeMzkClient } from "@mzk/http"
import { makeHttpClient } from "@mzk/testkit"
import { expect, it } from "@effect/vitest"
import { Context, Effect, Redacted } from "effect"
import { describe } from "vitest"
import { startServer } from "../realServer.js"

describe("API keys over a real port, with the typed client", () => {
  it.scopedLive("create, list, revoke; errors decode into the core's tagged errors", () =>
    Effect.gen(function*() {
      const { baseUrl, context } = yield* startServer()
      const account = yield* Effect.flatMap(Accounts, (a) => a.create({ name: "E2E" })).pipe(Effect.provide(context))
      const first = yield* Effect.flatMap(ApiKeys, (k) => k.create(account.id, { name: "first" })).pipe(Effect.provide(context))
      const client = yield* makeMzkClient({ baseUrl, apiKey: Redacted.value(first.secret) })

      const created = yield* client.keys.create({ payload: { name: "from-client", scopes: ["keys:read"] } })
      expect(created.key).toMatch(/^mzk_/)
      expect(created.scopes).toEqual(["keys:read"])
      const listed = yield* client.keys.list()
      expect(listed.keys.map((k) => k.name)).toEqual(["from-client", "first"])
      expect(JSON.stringify(listed)).not.toContain(created.key)
      yield* client.keys.revoke({ path: { id: created.id } })
      expect((yield* client.keys.list()).total).toBe(1)

      const notFound = yield* Effect.flip(client.keys.revoke({ path: { id: created.id } }))
      expect(notFound._tag).toBe("KeyNotFound")
      for (let i = 0; i < 9; i++) yield* client.keys.create({ payload: { name: `k${i}` } })
      const limited = yield* Effect.flip(client.keys.create({ payload: { name: "eleventh" } }))
      expect(limited._tag).toBe("KeyLimitReached")

      const revokedClient = yield* makeMzkClient({ baseUrl, apiKey: created.key! })
      expect((yield* Effect.flip(revokedClient.keys.list()))._tag).toBe("InvalidApiKey")

      const raw = yield* Effect.promise(() => makeHttpClient(baseUrl, { token: Redacted.value(first.secret) }).send("GET", "/api/v1/keys"))
      expect(raw.headers.get("request-id")).toMatch(/^req_/)
      expect(Context.isContext(context)).toBe(true)
    }).pipe(Effect.provide(FetchHttpClient.layer)), 60_000)
})
