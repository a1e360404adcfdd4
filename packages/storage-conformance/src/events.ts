import { expect } from "@effect/vitest"
import {
  type AccountId,
  DeliveriesRepo,
  type DeliveryRecord,
  type DeliveryStatus,
  type EventRecord,
  EventsRepo,
  makeId,
  type Timestamp,
  type WebhookRecord
} from "@mzk/core"
import { Effect, Option } from "effect"
import { parkEverythingPending } from "./deliveries.js"
import type { ConformanceIt } from "./env.js"
import { eventRecord, freshAccount, ids, storedWebhook } from "./fixtures.js"

const at = (iso: string) => iso as Timestamp

/**
 * Retention deletes across every account, so these tests date their events before 1970, where no
 * other test of the suite (each starting its `TestClock` at 0) writes any.
 */
const OLD = (day: number) => at(`1969-06-${String(day).padStart(2, "0")}T00:00:00.000Z`)
const CUTOFF = at("1969-07-01T00:00:00.000Z")

/** An event of the account, stored, with one delivery in each of `statuses` (and an attempt of each). */
const storedEvent = (account: AccountId, webhook: WebhookRecord, overrides: Partial<EventRecord>, statuses: ReadonlyArray<DeliveryStatus> = []) =>
  Effect.gen(function*() {
    const event = yield* eventRecord(account, overrides)
    yield* (yield* EventsRepo).insert(event)
    const deliveries: Array<DeliveryRecord> = []
    for (const status of statuses) {
      const delivery: DeliveryRecord = {
        id: yield* makeId("delivery"),
        account_id: account,
        event_id: event.id,
        webhook_id: webhook.id,
        status,
        trigger: "scheduled",
        attempts: 1,
        next_attempt_at: status === "pending" ? at("2999-06-01T00:00:00.000Z") : null,
        lease_expires_at: null,
        first_failed_at: null,
        last_attempt_at: event.created_at,
        created_at: event.created_at,
        updated_at: event.created_at
      }
      yield* (yield* DeliveriesRepo).insertMany([delivery])
      deliveries.push(delivery)
    }
    return { event, deliveries }
  })

export const eventTests = (it: ConformanceIt, timeout: number) => {
  it.effect("events: list filters by types and by a creation time range, newest first, total counting the filter", () =>
    Effect.gen(function*() {
      const repo = yield* EventsRepo
      const account = yield* freshAccount
      const other = yield* freshAccount
      const made: Array<EventRecord> = []
      const types = ["proof.completed", "proof.failed", "key.created", "proof.completed", "webhook.test", "proof.failed"] as const
      for (const [i, type] of types.entries()) {
        const event = yield* eventRecord(account, { type, created_at: at(`2030-01-0${i + 1}T00:00:00.000Z`) })
        yield* repo.insert(event)
        made.push(event)
      }
      yield* repo.insert(yield* eventRecord(other, { type: "proof.completed", created_at: at("2030-01-02T00:00:00.000Z") }))
      const newest = [...made].reverse()

      const all = yield* repo.list(account, { limit: 10 })
      expect(ids(all.items)).toEqual(ids(newest))
      expect(all.items[0]).toEqual(newest[0])

      const proofs = yield* repo.list(account, { limit: 2 }, { types: ["proof.completed", "proof.failed"] })
      expect(ids(proofs.items)).toEqual([made[5]!.id, made[3]!.id])
      expect([proofs.total, proofs.has_more]).toEqual([4, true])
      const rest = yield* repo.list(account, { limit: 2, startingAfter: made[3]!.id }, { types: ["proof.completed", "proof.failed"] })
      expect(ids(rest.items)).toEqual([made[1]!.id, made[0]!.id])
      expect([rest.total, rest.has_more]).toEqual([4, false])

      // created_gte is inclusive, created_lt exclusive.
      const range = yield* repo.list(account, { limit: 10 }, {
        createdGte: at("2030-01-02T00:00:00.000Z"),
        createdLt: at("2030-01-05T00:00:00.000Z")
      })
      expect(ids(range.items)).toEqual([made[3]!.id, made[2]!.id, made[1]!.id])
      expect(range.total).toBe(3)
      const both = yield* repo.list(account, { limit: 10 }, { types: ["proof.failed"], createdGte: at("2030-01-03T00:00:00.000Z") })
      expect(ids(both.items)).toEqual([made[5]!.id])
      const none = yield* repo.list(account, { limit: 10 }, { types: ["circuit.ready"] })
      expect([none.items, none.total, none.has_more]).toEqual([[], 0, false])
    }), timeout)

  it.effect("events: deleteExpired deletes old events with their settled deliveries and attempts, never one with a pending delivery", () =>
    Effect.gen(function*() {
      const repo = yield* EventsRepo
      const deliveries = yield* DeliveriesRepo
      yield* parkEverythingPending
      const account = yield* freshAccount
      const webhook = yield* storedWebhook(account)
      const settled = yield* storedEvent(account, webhook, { created_at: OLD(1) }, ["succeeded", "pending", "cancelled"])
      const waiting = yield* storedEvent(account, webhook, { created_at: OLD(2) }, ["succeeded", "pending"])
      const bare = yield* storedEvent(account, webhook, { created_at: OLD(3) })
      const recent = yield* storedEvent(account, webhook, { created_at: CUTOFF }, ["failed"])
      // An attempt of each pending delivery, recorded as the engine does (claimed, then written):
      // the first one's settles it as failed, the second's leaves it pending for a retry.
      const claimed = yield* deliveries.claimDue({
        now: at("2999-07-01T00:00:00.000Z"),
        limit: 10,
        maxPerWebhook: 10,
        leaseUntil: at("2999-07-01T00:01:00.000Z"),
        excludeWebhooks: []
      })
      expect(ids(claimed)).toEqual([settled.deliveries[1]!.id, waiting.deliveries[1]!.id])
      const attempts = []
      for (const [i, delivery] of claimed.entries()) {
        const attempt = {
          id: yield* makeId("attempt"),
          account_id: account,
          delivery_id: delivery.id,
          webhook_id: webhook.id,
          event_id: delivery.event_id,
          event_type: "key.revoked" as const,
          attempt: 2,
          trigger: "scheduled" as const,
          attempted_at: at("2999-07-01T00:00:00.000Z"),
          outcome: "failed" as const,
          status_code: 500,
          error: null,
          latency_ms: 1,
          response_body: ""
        }
        const after = i === 0
          ? { status: "failed" as const, next_attempt_at: null, first_failed_at: attempt.attempted_at }
          : { status: "pending" as const, next_attempt_at: at("2999-07-01T00:00:30.000Z"), first_failed_at: attempt.attempted_at }
        expect(yield* deliveries.recordAttempt(attempt, after, delivery.lease_expires_at!)).toBe(true)
        attempts.push(attempt)
      }
      expect((yield* deliveries.listAttempts(account, webhook.id, { limit: 10 })).total).toBe(2)

      expect(yield* repo.deleteExpired(CUTOFF, 10)).toBe(2)
      for (const gone of [settled, bare]) expect(Option.isNone(yield* repo.get(gone.event.id))).toBe(true)
      expect(yield* deliveries.listByEvent(settled.event.id)).toEqual([])
      expect(Option.isNone(yield* deliveries.get(account, settled.deliveries[0]!.id))).toBe(true)
      // The event whose delivery is pending stays whole, with its attempt; the recent one too.
      expect(Option.isSome(yield* repo.get(waiting.event.id))).toBe(true)
      expect(ids(yield* deliveries.listByEvent(waiting.event.id))).toEqual(ids(waiting.deliveries))
      expect((yield* deliveries.listAttempts(account, webhook.id, { limit: 10 })).items).toEqual([attempts[1]])
      expect(Option.isSome(yield* repo.get(recent.event.id))).toBe(true)
      expect(ids(yield* deliveries.listByEvent(recent.event.id))).toEqual(ids(recent.deliveries))
      expect(yield* repo.deleteExpired(CUTOFF, 10)).toBe(0)
    }), timeout)

  it.effect("events: deleteExpired takes the oldest first, at most limit at a time", () =>
    Effect.gen(function*() {
      const repo = yield* EventsRepo
      const account = yield* freshAccount
      const webhook = yield* storedWebhook(account)
      const made: Array<EventRecord> = []
      for (const day of [24, 22, 23]) made.push((yield* storedEvent(account, webhook, { created_at: OLD(day) }, ["succeeded"])).event)
      expect(yield* repo.deleteExpired(CUTOFF, 2)).toBe(2)
      const left = yield* Effect.all(made.map((e) => repo.get(e.id)))
      expect(left.map(Option.isSome)).toEqual([true, false, false])
      expect(yield* repo.deleteExpired(CUTOFF, 2)).toBe(1)
      expect(yield* repo.deleteExpired(CUTOFF, 2)).toBe(0)
    }), timeout)
}
