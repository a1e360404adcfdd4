import { expect, it } from "@effect/vitest"
import { createClient } from "@mzk/client"
import { Accounts, ApiKeys } from "@mzk/core"
import { FakeProver } from "@mzk/testkit"
import { Effect, Redacted } from "effect"
import { describe } from "vitest"
import { startServer } from "../../server/test/realServer.js"

describe("@mzk/client: usage and scheduling against a real server", () => {
  it.scopedLive("client.usage.get() reports the key's minute, the account's day and today's proofs; proofs.create takes priority and timeout_ms", () =>
    Effect.gen(function*() {
      const { baseUrl, context } = yield* startServer({ workers: false, prover: FakeProver() })
      const account = yield* Effect.flatMap(Accounts, (a) => a.create({ name: "Usage" })).pipe(Effect.provide(context))
      const key = yield* Effect.flatMap(ApiKeys, (k) => k.create(account.id, { name: "k" })).pipe(Effect.provide(context))
      const client = createClient({ baseUrl, apiKey: Redacted.value(key.secret) })

      const before = yield* Effect.promise(() => client.usage.get())
      expect(before.rate_limits.per_day).toMatchObject({ policy: "daily", limit: 5000, used: 0, remaining: 5000 })
      expect(before.proofs_today).toEqual({ queued: 0, running: 0, completed: 0, failed: 0, canceled: 0, expired: 0 })
      expect(before.circuits).toEqual([])

      // No workers: the proofs stay queued, in the order the account's queue will take them.
      const low = yield* Effect.promise(() => client.proofs.create({ type: "multiplier", inputs: { a: 3, b: 11 }, priority: "low" }))
      const high = yield* Effect.promise(() =>
        client.proofs.create({ type: "multiplier", inputs: { a: 3, b: 12 }, priority: "high", timeout_ms: 30_000 }))
      expect([low.priority, low.queue_position, high.priority, high.queue_position]).toEqual(["low", 1, "high", 1])
      expect((yield* Effect.promise(() => client.proofs.get(low.proof_id))).queue_position).toBe(2)
      expect(Date.parse(high.deadline_at!) - Date.parse(high.created_at)).toBe(30_000)

      const after = yield* Effect.promise(() => client.usage.get())
      expect(after.rate_limits.per_minute).toMatchObject({ policy: "key", limit: 60 })
      expect(after.rate_limits.per_day).toMatchObject({ used: 2, remaining: 4998 })
      expect(after.proofs_today.queued).toBe(2)
    }), 60_000)
})
