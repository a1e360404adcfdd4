import { describe, expect, it } from "@effect/vitest"
import { type AccountId, Accounts, ApiKeys, DeliveriesRepo, type EventId, Events, timestampFromMillis, WebhookReplay, Webhooks } from "@mzk/core"
import { testService, type TestServiceOptions } from "@mzk/testkit"
import { Clock, Effect, TestClock } from "effect"

const MINUTE = 60_000
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR

const run = <A, E, R>(body: Effect.Effect<A, E, R>, options: TestServiceOptions = {}) =>
  Effect.provide(body, testService(options)) as Effect.Effect<A, E, never>

const nowIso = Effect.map(Clock.currentTimeMillis, timestampFromMillis)
const newAccount = Effect.map(Effect.flatMap(Accounts, (a) => a.create({ name: "Acme" })), (a) => a.id)

/** A key.created event, and its id. */
const event = (account: AccountId, name: string) =>
  Effect.gen(function*() {
    yield* (yield* ApiKeys).create(account, { name })
    const [latest] = (yield* (yield* Events).list(account, { limit: 1 })).events
    return latest!.id
  })

const exists = (account: AccountId, id: EventId) =>
  Effect.flatMap(Events, (events) => Effect.match(events.get(account, id), { onFailure: () => false, onSuccess: () => true }))

describe("event retention (TestClock)", () => {
  it.effect("events are kept for the retention window (30 days by default), then deleted by the next sweep", () =>
    run(Effect.gen(function*() {
      const account = yield* newAccount
      const first = yield* event(account, "first")
      yield* TestClock.adjust(10 * DAY)
      const later = yield* event(account, "later")
      // Exactly 30 days old at a sweep: still there.
      yield* TestClock.adjust(20 * DAY)
      expect(yield* exists(account, first)).toBe(true)
      yield* TestClock.adjust(6 * HOUR)
      expect(yield* exists(account, first)).toBe(false)
      expect((yield* Effect.flip((yield* Events).get(account, first)))._tag).toBe("EventNotFound")
      expect((yield* (yield* Events).list(account)).events.map((e) => e.id)).toEqual([later])
      yield* TestClock.adjust(10 * DAY)
      expect((yield* (yield* Events).list(account)).total).toBe(0)
    }), { eventsConfig: { sweepIntervalMs: 6 * HOUR } }))

  it.effect("an event whose delivery is still pending is kept until it settles, then goes with its deliveries and attempts", () =>
    run(Effect.gen(function*() {
      const account = yield* newAccount
      const { webhook } = yield* (yield* Webhooks).create(account, { url: "https://down.example.com/", events: ["key.created"] })
      const id = yield* event(account, "retried")
      yield* event(account, "other")
      // Retention is an hour, the retries go on for 8: the sweeps pass it by meanwhile.
      yield* TestClock.adjust(7 * HOUR)
      expect(yield* exists(account, id)).toBe(true)
      const log = (yield* (yield* Webhooks).listDeliveryAttempts(account, webhook.id, { limit: 100 })).attempts
      expect(log.filter((a) => a.event_id === id).length).toBe(5)
      // The last retry fails at +8 h; the sweep after it deletes the event with all of it.
      yield* TestClock.adjust(2 * HOUR)
      expect(yield* exists(account, id)).toBe(false)
      expect(yield* (yield* DeliveriesRepo).listByEvent(id)).toEqual([])
      const left = (yield* (yield* Webhooks).listDeliveryAttempts(account, webhook.id, { limit: 100 })).attempts
      expect(left.filter((a) => a.event_id === id)).toEqual([])
      // A delivery gone with its event cannot be retried (it is not found), nor recovered (too old).
      yield* (yield* Webhooks).update(account, webhook.id, { active: true })
      const gone = log.find((a) => a.event_id === id)!.delivery_id
      const retry = yield* Effect.flip((yield* WebhookReplay).retryDelivery(account, webhook.id, gone))
      expect(retry._tag).toBe("DeliveryNotFound")
    }), { eventsConfig: { retentionMs: HOUR, sweepIntervalMs: HOUR }, webhooks: { "https://down.example.com/": [{ status: 503 }] } }))

  it.effect("the sweep deletes in batches until none is left", () =>
    run(Effect.gen(function*() {
      const account = yield* newAccount
      const keys = yield* ApiKeys
      // 50 events: 25 keys created and revoked.
      for (let round = 0; round < 5; round++) {
        for (let i = 0; i < 5; i++) {
          const created = yield* keys.create(account, { name: `k${round}-${i}` })
          yield* keys.revoke(account, created.api_key.id)
        }
      }
      expect((yield* (yield* Events).list(account)).total).toBe(50)
      yield* TestClock.adjust(2 * DAY + HOUR)
      expect((yield* (yield* Events).list(account)).total).toBe(0)
    }), { eventsConfig: { retentionMs: DAY, sweepIntervalMs: DAY, sweepBatchSize: 7 } }))

  it.effect("recoveries that ended before the window go with it", () =>
    run(Effect.gen(function*() {
      const account = yield* newAccount
      const { webhook } = yield* (yield* Webhooks).create(account, { url: "https://ok.example.com/", events: ["key.created"] })
      const replay = yield* WebhookReplay
      const first = yield* replay.recover(account, webhook.id, { since: yield* nowIso })
      yield* TestClock.adjust(HOUR)
      expect((yield* replay.getRecovery(account, webhook.id, first.id)).status).toBe("completed")
      yield* TestClock.adjust(DAY)
      const second = yield* replay.recover(account, webhook.id, { since: yield* nowIso })
      yield* TestClock.adjust(DAY - HOUR)
      expect((yield* replay.listRecoveries(account, webhook.id)).recoveries.map((r) => r.id)).toEqual([second.id])
    }), { eventsConfig: { retentionMs: DAY, sweepIntervalMs: DAY } }))
})
