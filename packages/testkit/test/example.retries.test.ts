// An example of testing code built on mzk, written as a user's suite would be: only the public
// APIs of @mzk/testkit, @mzk/core and effect. The whole service runs in-process over the memory
// store, the fake prover and a scripted webhook transport, on a simulated clock.
import { Accounts, ApiKeys, Proofs, Webhooks } from "@mzk/core"
import { ScriptedWebhooks, testService } from "@mzk/testkit"
import { runRetryScheduleExample } from "@mzk/testkit/example"
import { Effect, Redacted, TestClock, TestContext } from "effect"
import { describe, expect, it } from "vitest"

const ENDPOINT = "https://hooks.example.com/mzk"
const SECOND = 1000
const MINUTE = 60 * SECOND
const HOUR = 60 * MINUTE

describe("a webhook whose endpoint keeps failing", () => {
  it("is retried 30 s, 5 min, 30 min, 2 h and 8 h after the first failure, then disabled", async () => {
    const walk = Effect.gen(function*() {
      // An account, a key and a webhook for proof.completed, through the services the API uses.
      const account = yield* Effect.flatMap(Accounts, (accounts) => accounts.create({ name: "Acme" }))
      const key = yield* Effect.flatMap(ApiKeys, (keys) => keys.create(account.id, { name: "ci" }))
      const principal = yield* Effect.flatMap(ApiKeys, (keys) => keys.authenticate(key.secret))
      const webhooks = yield* Webhooks
      const { secret, webhook } = yield* webhooks.create(account.id, { url: ENDPOINT, events: ["proof.completed"] })
      // As the README's example says: the secret comes back Redacted, printed as <redacted>, and
      // Redacted.value gives the whsec_… string a receiver verifies with.
      expect([Redacted.isRedacted(secret), String(secret), Redacted.value(secret).startsWith("whsec_")]).toEqual([true, "<redacted>", true])

      // A proof: the fake prover takes 100 ms of simulated time, then proof.completed is sent.
      yield* Effect.flatMap(Proofs, (proofs) => proofs.create(principal.account_id, { type: "multiplier", inputs: { a: 3, b: 11 } }))
      yield* TestClock.adjust("1 second")
      const scripted = yield* ScriptedWebhooks
      const [first] = yield* scripted.requestsTo(ENDPOINT)
      expect(first).toBeDefined()
      const t0 = first!.at_ms
      const sentAt = Effect.map(scripted.requestsTo(ENDPOINT), (requests) => requests.map((r) => r.at_ms - t0))

      // Each retry happens exactly when due, and not a millisecond before.
      const schedule = [30 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 8 * HOUR]
      for (const [i, dueMs] of schedule.entries()) {
        yield* TestClock.setTime(t0 + dueMs - 1)
        expect(yield* sentAt).toHaveLength(i + 1)
        yield* TestClock.setTime(t0 + dueMs)
        expect(yield* sentAt).toEqual([0, ...schedule.slice(0, i + 1)])
        expect((yield* webhooks.get(account.id, webhook.id)).active).toBe(i < schedule.length - 1)
      }

      // The sixth failure disables the webhook; nothing is sent after.
      const disabled = yield* webhooks.get(account.id, webhook.id)
      expect([disabled.active, disabled.disabled_reason]).toEqual([false, "delivery_failures"])
      yield* TestClock.adjust("2 days")
      expect(yield* sentAt).toEqual([0, ...schedule])

      // Every attempt is in the webhook's delivery log, as GET /webhooks/{id}/deliveries shows it.
      const log = yield* webhooks.listDeliveryAttempts(account.id, webhook.id, { limit: 100 })
      // Newest first, as every list is.
      const oldestFirst = [...log.attempts].reverse()
      expect(oldestFirst.map((a) => [a.attempt, a.event_type, a.outcome, a.status_code])).toEqual(
        [1, 2, 3, 4, 5, 6].map((n) => [n, "proof.completed", "failed", 500])
      )
      expect(oldestFirst.map((a) => Date.parse(a.attempted_at) - t0)).toEqual([0, ...schedule])
    })

    await Effect.runPromise(walk.pipe(
      Effect.provide(testService({ webhooks: { [ENDPOINT]: [{ status: 500, body: "down for maintenance" }] } })),
      Effect.provide(TestContext.TestContext)
    ))
  })

  it("the same walk, packaged for plain Node as @mzk/testkit/example", async () => {
    const result = await runRetryScheduleExample()
    expect(result.attempts.map((a) => [a.attempt, a.afterMs, a.statusCode])).toEqual([
      [1, 0, 500],
      [2, 30 * SECOND, 500],
      [3, 5 * MINUTE, 500],
      [4, 30 * MINUTE, 500],
      [5, 2 * HOUR, 500],
      [6, 8 * HOUR, 500]
    ])
    expect(result.webhook).toEqual({ active: false, disabled_reason: "delivery_failures" })
  })
})
