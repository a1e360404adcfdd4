import { expect } from "@effect/vitest"
import {
  DeliveriesRepo,
  type DeliveryRecord,
  type DeliveryStatus,
  EventsRepo,
  makeId,
  RecoveriesRepo,
  type RecoveryRecord,
  type Timestamp,
  type WebhookRecord
} from "@mzk/core"
import { Effect, Option } from "effect"
import type { ConformanceIt } from "./env.js"
import { eventRecord, freshAccount, ids, storedWebhook } from "./fixtures.js"

const at = (iso: string) => iso as Timestamp

/** Times of these tests: the 2600s, where no other test of the suite leaves a running recovery or a lease. */
const T = (minute: number) => at(`2600-01-01T00:${String(minute).padStart(2, "0")}:00.000Z`)
const PARKED_UNTIL = at("2699-01-01T00:00:00.000Z")

/** Leases every running recovery in the store far ahead, so the next claims see only the test's own. */
const parkEverythingRunning = Effect.gen(function*() {
  const repo = yield* RecoveriesRepo
  for (;;) {
    const claimed = yield* repo.claim({ now: at("2698-01-01T00:00:00.000Z"), leaseUntil: PARKED_UNTIL, limit: 500 })
    if (claimed.length === 0) return
  }
})

/** A stored delivery of a stored event, created at `created`, in `status`. */
const delivery = (webhook: WebhookRecord, status: DeliveryStatus, created: Timestamp) =>
  Effect.gen(function*() {
    const event = yield* eventRecord(webhook.account_id)
    yield* (yield* EventsRepo).insert(event)
    const row: DeliveryRecord = {
      id: yield* makeId("delivery"),
      account_id: webhook.account_id,
      event_id: event.id,
      webhook_id: webhook.id,
      status,
      trigger: "scheduled",
      attempts: status === "pending" ? 0 : 6,
      next_attempt_at: status === "pending" ? at("2999-12-31T23:59:59.000Z") : null,
      lease_expires_at: null,
      first_failed_at: status === "failed" ? created : null,
      last_attempt_at: status === "pending" ? null : created,
      created_at: created,
      updated_at: created
    }
    yield* (yield* DeliveriesRepo).insertMany([row])
    return row
  })

const stored = (row: DeliveryRecord) =>
  Effect.map(Effect.flatMap(DeliveriesRepo, (repo) => repo.get(row.account_id, row.id)), Option.getOrThrow)

const recoveryOf = (webhook: WebhookRecord, overrides: Partial<RecoveryRecord> = {}) =>
  Effect.gen(function*() {
    const record: RecoveryRecord = {
      id: yield* makeId("recovery"),
      account_id: webhook.account_id,
      webhook_id: webhook.id,
      status: "running",
      since: T(0),
      until: T(30),
      requeued: 0,
      created_at: T(30),
      completed_at: null,
      cursor: null,
      lease_expires_at: null,
      updated_at: T(30),
      ...overrides
    }
    yield* (yield* RecoveriesRepo).insert(record)
    return record
  })

export const recoveryTests = (it: ConformanceIt, timeout: number) => {
  it.effect("deliveries: get is the account's own; requeue queues a settled delivery for one manual attempt, never a pending one", () =>
    Effect.gen(function*() {
      const repo = yield* DeliveriesRepo
      const account = yield* freshAccount
      const webhook = yield* storedWebhook(account)
      const failed = yield* delivery(webhook, "failed", T(1))
      const pending = yield* delivery(webhook, "pending", T(2))
      expect(yield* repo.get(account, failed.id)).toEqual(Option.some(failed))
      expect(Option.isNone(yield* repo.get(yield* freshAccount, failed.id))).toBe(true)

      for (const status of ["failed", "succeeded", "cancelled"] as const) {
        const row = status === "failed" ? failed : yield* delivery(webhook, status, T(3))
        const queued = yield* repo.requeue(row.id, T(5))
        const expected: DeliveryRecord = { ...row, status: "pending", trigger: "manual", next_attempt_at: T(5), lease_expires_at: null, updated_at: T(5) }
        expect(queued).toEqual(Option.some(expected))
        expect(yield* stored(row)).toEqual(expected)
        // Pending now: a second requeue changes nothing.
        expect(Option.isNone(yield* repo.requeue(row.id, T(6)))).toBe(true)
        expect((yield* stored(row)).next_attempt_at).toBe(T(5))
      }
      expect(Option.isNone(yield* repo.requeue(pending.id, T(5)))).toBe(true)
      expect(yield* stored(pending)).toEqual(pending)
      expect(Option.isNone(yield* repo.requeue(yield* makeId("delivery"), T(5)))).toBe(true)
    }), timeout)

  it.effect("deliveries: requeueFailed queues one webhook's failed and cancelled deliveries in the time range, in id order, a batch after the cursor", () =>
    Effect.gen(function*() {
      const repo = yield* DeliveriesRepo
      const account = yield* freshAccount
      const webhook = yield* storedWebhook(account)
      const other = yield* storedWebhook(account)
      const before = yield* delivery(webhook, "failed", T(0))
      const inRange = [
        yield* delivery(webhook, "failed", T(1)),
        yield* delivery(webhook, "cancelled", T(2)),
        yield* delivery(webhook, "failed", T(3)),
        yield* delivery(webhook, "failed", T(10))
      ]
      const succeeded = yield* delivery(webhook, "succeeded", T(4))
      const pending = yield* delivery(webhook, "pending", T(5))
      const after = yield* delivery(webhook, "failed", T(11))
      const elsewhere = yield* delivery(other, "failed", T(3))
      const batch = { webhookId: webhook.id, since: T(1), until: T(10), limit: 3, at: T(20) }

      const first = yield* repo.requeueFailed({ ...batch, after: null })
      expect(first).toEqual({ scanned: 3, last: inRange[2]!.id, requeued: 3 })
      for (const row of inRange.slice(0, 3)) {
        expect(yield* stored(row)).toEqual({ ...row, status: "pending", trigger: "manual", next_attempt_at: T(20), lease_expires_at: null, updated_at: T(20) })
      }
      const second = yield* repo.requeueFailed({ ...batch, after: first.last })
      expect(second).toEqual({ scanned: 1, last: inRange[3]!.id, requeued: 1 })
      expect(yield* repo.requeueFailed({ ...batch, after: second.last })).toEqual({ scanned: 0, last: null, requeued: 0 })
      // Outside the range, settled otherwise, pending, or another webhook's: untouched.
      for (const row of [before, succeeded, pending, after, elsewhere]) expect(yield* stored(row)).toEqual(row)
      // Requeued deliveries are pending now: a recovery starting over finds none of them.
      expect(yield* repo.requeueFailed({ ...batch, after: null })).toEqual({ scanned: 0, last: null, requeued: 0 })
    }), timeout)

  it.effect("recoveries: insert, get within the account and webhook, list newest first", () =>
    Effect.gen(function*() {
      const repo = yield* RecoveriesRepo
      const account = yield* freshAccount
      const webhook = yield* storedWebhook(account)
      const sibling = yield* storedWebhook(account)
      const made = [yield* recoveryOf(webhook), yield* recoveryOf(webhook, { status: "completed", requeued: 7, completed_at: T(31) }), yield* recoveryOf(webhook)]
      yield* recoveryOf(sibling)
      expect(yield* repo.get(account, webhook.id, made[1]!.id)).toEqual(Option.some(made[1]))
      expect(Option.isNone(yield* repo.get(account, sibling.id, made[1]!.id))).toBe(true)
      expect(Option.isNone(yield* repo.get(yield* freshAccount, webhook.id, made[1]!.id))).toBe(true)
      const page = yield* repo.list(account, webhook.id, { limit: 2 })
      expect(page.items).toEqual([made[2], made[1]])
      expect([page.total, page.has_more]).toEqual([3, true])
      const rest = yield* repo.list(account, webhook.id, { limit: 2, startingAfter: made[1]!.id })
      expect(ids(rest.items)).toEqual([made[0]!.id])
    }), timeout)

  it.effect("recoveries: claim takes running ones without a live lease, least recently advanced first; advance and release act only under the lease", () =>
    Effect.gen(function*() {
      const repo = yield* RecoveriesRepo
      yield* parkEverythingRunning
      const account = yield* freshAccount
      const webhook = yield* storedWebhook(account)
      const later = yield* recoveryOf(webhook, { updated_at: T(2) })
      const earlier = yield* recoveryOf(webhook, { updated_at: T(1) })
      yield* recoveryOf(webhook, { status: "completed", completed_at: T(1), updated_at: T(0) })
      const leased = yield* recoveryOf(webhook, { updated_at: T(0), lease_expires_at: T(10) })

      expect(yield* repo.claim({ now: T(5), leaseUntil: T(6), limit: 1 })).toEqual([{ ...earlier, lease_expires_at: T(6) }])
      expect(ids(yield* repo.claim({ now: T(5), leaseUntil: T(6), limit: 10 }))).toEqual([later.id])
      expect(yield* repo.claim({ now: T(5), leaseUntil: T(6), limit: 10 })).toEqual([])
      // Leases that lapsed are claimable again; the one that holds until T(10) became so at T(10).
      expect(ids(yield* repo.claim({ now: T(10), leaseUntil: T(11), limit: 10 }))).toEqual([leased.id, earlier.id, later.id])

      const progress = { status: "running" as const, cursor: null, requeued: 3, completed_at: null, updated_at: T(10) }
      expect(yield* repo.advance(earlier.id, T(6), progress)).toBe(false)
      expect(yield* repo.advance(earlier.id, T(11), progress)).toBe(true)
      expect(yield* repo.get(account, webhook.id, earlier.id)).toEqual(Option.some({ ...earlier, ...progress, lease_expires_at: null }))
      // The lease is gone with the write: the same batch cannot be recorded twice.
      expect(yield* repo.advance(earlier.id, T(11), progress)).toBe(false)

      expect(yield* repo.release(later.id, T(6))).toBe(false)
      expect(yield* repo.release(later.id, T(11))).toBe(true)
      expect(Option.getOrThrow(yield* repo.get(account, webhook.id, later.id))).toEqual(later)
      const done = { status: "completed" as const, cursor: null, requeued: 0, completed_at: T(12), updated_at: T(12) }
      expect(yield* repo.advance(leased.id, T(11), done)).toBe(true)
      // Completed recoveries are never claimed again; the advanced one went to the back of the line.
      expect(ids(yield* repo.claim({ now: T(12), leaseUntil: T(13), limit: 10 }))).toEqual([later.id, earlier.id])
    }), timeout)

  it.effect("recoveries: deleteEnded deletes those that completed or were cancelled before the cutoff, at most limit at a time", () =>
    Effect.gen(function*() {
      const repo = yield* RecoveriesRepo
      const webhook = yield* storedWebhook(yield* freshAccount)
      // Ended in 1968, where no other test of the suite ends one.
      const old = (month: number) => at(`1968-0${month}-01T00:00:00.000Z`)
      const ended = [
        yield* recoveryOf(webhook, { status: "completed", completed_at: old(1) }),
        yield* recoveryOf(webhook, { status: "cancelled", completed_at: old(2) }),
        yield* recoveryOf(webhook, { status: "completed", completed_at: old(3) })
      ]
      const later = yield* recoveryOf(webhook, { status: "completed", completed_at: old(7) })
      const running = yield* recoveryOf(webhook, { updated_at: old(1) })
      expect(yield* repo.deleteEnded(old(6), 2)).toBe(2)
      expect(yield* repo.deleteEnded(old(6), 2)).toBe(1)
      expect(yield* repo.deleteEnded(old(6), 2)).toBe(0)
      for (const gone of ended) expect(Option.isNone(yield* repo.get(webhook.account_id, webhook.id, gone.id))).toBe(true)
      for (const kept of [later, running]) expect(yield* repo.get(webhook.account_id, webhook.id, kept.id)).toEqual(Option.some(kept))
    }), timeout)

  it.effect("recoveries: concurrent claims never hand out the same recovery twice", () =>
    Effect.gen(function*() {
      const repo = yield* RecoveriesRepo
      yield* parkEverythingRunning
      const webhook = yield* storedWebhook(yield* freshAccount)
      const made = yield* Effect.all(Array.from({ length: 20 }, () => recoveryOf(webhook)))
      const results = yield* Effect.all(
        Array.from({ length: 30 }, () => repo.claim({ now: T(40), leaseUntil: T(41), limit: 2 })),
        { concurrency: "unbounded" }
      )
      const claimed = results.flat().map((r) => r.id)
      expect(claimed.length).toBe(20)
      expect([...claimed].sort()).toEqual(ids(made).sort())
    }), timeout)
}
