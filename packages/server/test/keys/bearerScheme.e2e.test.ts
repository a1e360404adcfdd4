import { expect, it } from "@effect/vitest"
import { Accounts, ApiKeys } from "@mzk/core"
import { Effect, Redacted } from "effect"
import { describe } from "vitest"
import { startServer } from "../realServer.js"

describe("the Authorization scheme, over a real port", () => {
  it.scopedLive("only Bearer (any case) authenticates; any other scheme in front of a valid key is 401 invalid_api_key", () =>
    Effect.gen(function*() {
      const { client, context } = yield* startServer()
      const key = yield* Effect.gen(function*() {
        const account = yield* (yield* Accounts).create({ name: "Schemes" })
        return Redacted.value((yield* (yield* ApiKeys).create(account.id, { name: "k" })).secret)
      }).pipe(Effect.provide(context))
      const status = (authorization: string) =>
        Effect.promise(() => client.send("GET", "/api/v1/keys", { headers: { authorization } }))

      for (const refused of [
        `Digest ${key}`,
        `Basic1 ${key}`,
        `XXXXXXX${key}`,
        `Token  ${key}`,
        `Bearer${key}`,
        `Bearer:${key}`,
        `Bearerx${key}`,
        `Bearer_${key}`,
        `Basic ${key}`,
        `${key}`,
        `Bearer ${key} extra`
      ]) {
        const reply = yield* status(refused)
        expect(reply.status, refused.replace(key, "<key>")).toBe(401)
        const body = reply.json as { error: { code: string; request_id: string; message: string } }
        expect(body.error.code).toBe("invalid_api_key")
        expect(body.error.request_id).toBe(reply.headers.get("request-id"))
        expect(body.error.message).not.toContain(key)
      }
      // RFC 9110 §11.1: the scheme is case-insensitive; RFC 6750: one or more spaces before the token.
      for (const accepted of [`Bearer ${key}`, `bearer ${key}`, `BEARER ${key}`, `bEaReR ${key}`, `Bearer   ${key}`]) {
        expect((yield* status(accepted)).status, accepted.replace(key, "<key>")).toBe(200)
      }
    }), 30_000)
})
