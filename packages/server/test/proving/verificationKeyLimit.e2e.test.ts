// Registered verification keys are capped per account and metered, as keys, webhooks and circuits
// are: over a real port, on SQLite and on Postgres, concurrent registrations past the cap are
// refused with 409 `verification_key_limit_reached`, each registration is charged to the key's
// minute (its RateLimit fields), and a deleted key makes room.
import { Accounts, ApiKeys } from "@mzk/core"
import { makeHttpClient } from "@mzk/testkit"
import { expect, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { beforeAll, describe } from "vitest"
import { STORES } from "../bothStores.js"
import { startServer } from "../realServer.js"
import { type Foreign, makeForeignGroth16 } from "./verifications.fixtures.js"

let groth16: Foreign
beforeAll(async () => {
  groth16 = await makeForeignGroth16()
}, 300_000)

describe.each(STORES)("verification keys per account, on %s", (_, database) => {
  it.scopedLive("at most the cap under concurrent registrations (409 naming it), each one metered, a deleted one making room", () =>
    Effect.gen(function*() {
      const { baseUrl, context } = yield* startServer({ database: yield* database, limits: { maxVerificationKeysPerAccount: 5, proofRequestsPerMinutePerKey: 30 } })
      const token = yield* Effect.gen(function*() {
        const account = yield* (yield* Accounts).create({ name: "Keys" })
        return Redacted.value((yield* (yield* ApiKeys).create(account.id, { name: "k" })).secret)
      }).pipe(Effect.provide(context))
      const client = makeHttpClient(baseUrl, { token })
      const register = (i: number) =>
        client.send("POST", "/api/v1/verification-keys", { body: { proving_system: "groth16", verification_key: groth16.key, name: `k${i}` } })

      const replies = yield* Effect.promise(() => Promise.all(Array.from({ length: 8 }, (_, i) => register(i))))
      const created = replies.filter((r) => r.status === 201)
      const refused = replies.filter((r) => r.status !== 201)
      expect(created.length).toBe(5)
      for (const reply of refused) {
        expect([reply.status, reply.json.error.code]).toEqual([409, "verification_key_limit_reached"])
        expect(reply.json.error.message).toContain("at most 5 verification keys")
      }
      const window = (reply: { headers: Headers }) => /^"key";r=(\d+);t=(\d+)$/.exec(reply.headers.get("ratelimit") ?? "")
      const remaining = (reply: { headers: Headers }) => Number(window(reply)?.[1])
      const secondsLeft = (reply: { headers: Headers }) => Number(window(reply)?.[2])
      for (const reply of created) expect(remaining(reply)).toBeGreaterThanOrEqual(22)
      expect((yield* Effect.promise(() => client.send("GET", "/api/v1/verification-keys"))).json.total).toBe(5)

      expect((yield* Effect.promise(() => client.send("DELETE", `/api/v1/verification-keys/${created[0]!.json.id}`))).status).toBe(204)
      const again = yield* Effect.promise(() => register(9))
      expect(again.status).toBe(201)
      // Every registration before it, refused or not, was a request on the key's minute: 30 - 9.
      // The minute is the wall clock's: a run slowed past its end meets a new one (more seconds
      // left than the burst had), where fewer of them count.
      if (secondsLeft(again) <= Math.min(...created.map(secondsLeft))) expect(remaining(again)).toBe(21)
      else expect(remaining(again)).toBeGreaterThan(21)
      expect((yield* Effect.promise(() => register(10))).status).toBe(409)
    }), 120_000)
})
