import { expect } from "@effect/vitest"
import {
  type AccountId,
  DeliveriesRepo,
  type DeliveryAttemptRecord,
  type DeliveryRecord,
  type EventRecord,
  EventsRepo,
  makeId,
  type Timestamp,
  type WebhookRecord,
  WebhooksRepo
} from "@mzk/core"
import { Effect, Option } from "effect"
import type { ConformanceIt } from "./env.js"
import { eventRecord, freshAccount, webhookRecord } from "./fixtures.js"

const at = (iso: string) => iso as Timestamp

/**
 * The delivery tests work in the 2500s; everything other tests left pending is first claimed with
 * a lease into 2999, so claims and `nextDueAt` here see only this test's rows while the store is
 * shared by the whole suite.
 */
const T = (minute: number, second = 0) => at(`2500-01-01T00:${String(minute).padStart(2, "0")}:${String(second).padStart(2, "0")}.000Z`)
const PARKED_UNTIL = at("2999-12-31T00:00:00.000Z")

/** Leases every pending delivery in the store until 2999-12-31, so the next claims see only the test's own. */
export const parkEverythingPending = Effect.gen(function*() {
  const repo = yield* DeliveriesRepo
  for (;;) {
    const claimed = yield* repo.claimDue({ now: at("2999-01-01T00:00:00.000Z"), limit: 500, maxPerWebhook: 500, leaseUntil: PARKED_UNTIL, excludeWebhooks: [] })
    if (claimed.length === 0) return
  }
})

interface Setup {
  readonly account: AccountId
  readonly event: EventRecord
  readonly webhooks: ReadonlyArray<WebhookRecord>
}

const setup = (webhookCount = 1, park = true) =>
  Effect.gen(function*() {
    if (park) yield* parkEverythingPending
    const account = yield* freshAccount
    const event = yield* eventRecord(account)
    yield* (yield* EventsRepo).insert(event)
    const webhooks: Array<WebhookRecord> = []
    for (let i = 0; i < webhookCount; i++) {
      const webhook = yield* webhookRecord(account)
      yield* (yield* WebhooksRepo).insert(webhook, { maxPerAccount: 20 })
      webhooks.push(webhook)
    }
    return { account, event, webhooks } satisfies Setup
  })

const pending = (s: Setup, webhook: WebhookRecord, due: Timestamp, overrides: Partial<DeliveryRecord> = {}) =>
  Effect.gen(function*() {
    const row: DeliveryRecord = {
      id: yield* makeId("delivery"),
      account_id: s.account,
      event_id: s.event.id,
      webhook_id: webhook.id,
      status: "pending",
      trigger: "scheduled",
      attempts: 0,
      next_attempt_at: due,
      lease_expires_at: null,
      first_failed_at: null,
      last_attempt_at: null,
      created_at: T(0),
      updated_at: T(0),
      ...overrides
    }
    yield* (yield* DeliveriesRepo).insertMany([row])
    return row
  })

const attemptOf = (delivery: DeliveryRecord, attempt: number, when: Timestamp, overrides: Partial<DeliveryAttemptRecord> = {}) =>
  Effect.gen(function*() {
    const record: DeliveryAttemptRecord = {
      id: yield* makeId("attempt"),
      account_id: delivery.account_id,
      delivery_id: delivery.id,
      webhook_id: delivery.webhook_id,
      event_id: delivery.event_id,
      event_type: "key.revoked",
      attempt,
      trigger: "scheduled",
      attempted_at: when,
      outcome: "failed",
      status_code: 500,
      error: null,
      latency_ms: 12,
      response_body: "ünïcödé error",
      ...overrides
    }
    return record
  })

const stored = (delivery: DeliveryRecord) =>
  Effect.map(Effect.flatMap(DeliveriesRepo, (repo) => repo.listByEvent(delivery.event_id)), (rows) => rows.find((r) => r.id === delivery.id)!)

const ids = (rows: ReadonlyArray<{ readonly id: string }>) => rows.map((r) => r.id)

export const deliveryTests = (it: ConformanceIt, timeout: number) => {
  it.effect("deliveries: claimDue takes pending, due, unleased rows, earliest first, sets the lease, and respects limit and exclusions", () =>
    Effect.gen(function*() {
      const repo = yield* DeliveriesRepo
      const s = yield* setup(2)
      const [a, b] = s.webhooks as [WebhookRecord, WebhookRecord]
      const late = yield* pending(s, a, T(3))
      const early = yield* pending(s, a, T(1))
      const other = yield* pending(s, b, T(2))
      const future = yield* pending(s, a, T(30))
      yield* pending(s, a, T(0), { status: "succeeded", next_attempt_at: null })
      yield* pending(s, a, T(0), { status: "cancelled", next_attempt_at: null })
      const leased = yield* pending(s, a, T(0), { lease_expires_at: T(10) })

      expect(yield* repo.claimDue({ now: T(5), limit: 10, maxPerWebhook: 100, leaseUntil: T(6), excludeWebhooks: [a.id] })).toEqual([
        { ...other, lease_expires_at: T(6), updated_at: T(5) }
      ])
      const claimed = yield* repo.claimDue({ now: T(5), limit: 1, maxPerWebhook: 100, leaseUntil: T(6), excludeWebhooks: [] })
      expect(claimed).toEqual([{ ...early, lease_expires_at: T(6), updated_at: T(5) }])
      expect(ids(yield* repo.claimDue({ now: T(5), limit: 10, maxPerWebhook: 100, leaseUntil: T(6), excludeWebhooks: [] }))).toEqual([late.id])
      expect(yield* repo.claimDue({ now: T(5), limit: 10, maxPerWebhook: 100, leaseUntil: T(6), excludeWebhooks: [] })).toEqual([])
      expect((yield* stored(early)).lease_expires_at).toBe(T(6))
      // A lease that ran out is claimable again; one that holds is not; future rows wait.
      expect(ids(yield* repo.claimDue({ now: T(10), limit: 10, maxPerWebhook: 100, leaseUntil: T(11), excludeWebhooks: [] })))
        .toEqual([leased.id, early.id, other.id, late.id])
      expect(yield* repo.claimDue({ now: T(10, 30), limit: 10, maxPerWebhook: 100, leaseUntil: T(12), excludeWebhooks: [] })).toEqual([])
      expect(ids(yield* repo.claimDue({ now: T(30), limit: 10, maxPerWebhook: 100, leaseUntil: T(31), excludeWebhooks: [] })))
        .toEqual([leased.id, early.id, other.id, late.id, future.id])
    }), timeout)

  it.effect("deliveries: claimDue takes at most maxPerWebhook of each webhook, the earliest ones", () =>
    Effect.gen(function*() {
      const repo = yield* DeliveriesRepo
      const s = yield* setup(2)
      const [a, b] = s.webhooks as [WebhookRecord, WebhookRecord]
      const a3 = yield* pending(s, a, T(3))
      const a1 = yield* pending(s, a, T(1))
      const a2 = yield* pending(s, a, T(2))
      const b5 = yield* pending(s, b, T(5))
      const b4 = yield* pending(s, b, T(4))
      const b6 = yield* pending(s, b, T(6))
      expect(ids(yield* repo.claimDue({ now: T(9), limit: 10, maxPerWebhook: 2, leaseUntil: T(10), excludeWebhooks: [] })))
        .toEqual([a1.id, a2.id, b4.id, b5.id])
      expect(ids(yield* repo.claimDue({ now: T(9), limit: 1, maxPerWebhook: 2, leaseUntil: T(10), excludeWebhooks: [] })))
        .toEqual([a3.id])
      expect(ids(yield* repo.claimDue({ now: T(9), limit: 10, maxPerWebhook: 1, leaseUntil: T(10), excludeWebhooks: [] })))
        .toEqual([b6.id])
    }), timeout)

  it.effect("deliveries: claimDue takes due deliveries in turns across accounts, the one holding fewest first, none past maxPerAccount", () =>
    Effect.gen(function*() {
      const repo = yield* DeliveriesRepo
      const busy = yield* setup(2)
      const quiet = yield* setup(1, false)
      const [a, b] = busy.webhooks as [WebhookRecord, WebhookRecord]
      const busyRows: Array<DeliveryRecord> = []
      for (let i = 1; i <= 6; i++) busyRows.push(yield* pending(busy, i % 2 === 0 ? a : b, T(i)))
      const q7 = yield* pending(quiet, quiet.webhooks[0]!, T(7))
      const q8 = yield* pending(quiet, quiet.webhooks[0]!, T(8))
      const [b1, b2, b3, b4] = busyRows as [DeliveryRecord, DeliveryRecord, DeliveryRecord, DeliveryRecord]
      const claim = (limit: number, held: ReadonlyArray<readonly [AccountId, number]>) =>
        Effect.map(
          repo.claimDue({ now: T(9), limit, maxPerWebhook: 100, leaseUntil: T(10), excludeWebhooks: [], maxPerAccount: 10, heldByAccount: new Map(held) }),
          ids
        )
      // The busy account's backlog is older, yet the quiet account's first delivery is in the first turn.
      expect(yield* claim(3, [])).toEqual([b1.id, b2.id, q7.id])
      // An account holding more goes after one holding less, and gets no turn at its cap.
      expect(yield* claim(3, [[busy.account, 9]])).toEqual([b3.id, q8.id])
      expect(yield* claim(3, [[busy.account, 10]])).toEqual([])
      expect(yield* repo.nextDueAt([], [busy.account])).not.toEqual(Option.some(T(4)))
      expect(yield* repo.nextDueAt([])).toEqual(Option.some(T(4)))
      expect(yield* claim(10, [[busy.account, 8]])).toEqual([b4.id, busyRows[4]!.id])
    }), timeout)

  it.effect("deliveries: concurrent claims never hand out the same delivery twice", () =>
    Effect.gen(function*() {
      const repo = yield* DeliveriesRepo
      const s = yield* setup(3)
      const rows: Array<DeliveryRecord> = []
      for (let i = 0; i < 30; i++) rows.push(yield* pending(s, s.webhooks[i % 3]!, T(1)))
      const results = yield* Effect.all(
        Array.from({ length: 40 }, () => repo.claimDue({ now: T(2), limit: 2, maxPerWebhook: 100, leaseUntil: T(3), excludeWebhooks: [] })),
        { concurrency: "unbounded" }
      )
      const claimed = results.flat().map((r) => r.id)
      expect(claimed.length).toBe(30)
      expect(new Set(claimed).size).toBe(30)
      expect([...claimed].sort()).toEqual(ids(rows).sort())
    }), timeout)

  it.effect("deliveries: recordAttempt writes only under the lease it was given; a takeover fences out the old holder", () =>
    Effect.gen(function*() {
      const repo = yield* DeliveriesRepo
      const s = yield* setup()
      const webhook = s.webhooks[0]!
      const delivery = yield* pending(s, webhook, T(1))
      const [first] = yield* repo.claimDue({ now: T(1), limit: 1, maxPerWebhook: 100, leaseUntil: T(2), excludeWebhooks: [] })
      // The lease ran out and another engine took the delivery over.
      const [second] = yield* repo.claimDue({ now: T(2), limit: 1, maxPerWebhook: 100, leaseUntil: T(3), excludeWebhooks: [] })
      expect([first!.id, second!.id]).toEqual([delivery.id, delivery.id])
      const stale = yield* attemptOf(delivery, 1, T(2, 30))
      const after = { status: "pending" as const, next_attempt_at: T(3, 30), first_failed_at: T(2, 30) }
      expect(yield* repo.recordAttempt(stale, after, first!.lease_expires_at!)).toBe(false)
      expect((yield* repo.listAttempts(s.account, webhook.id, { limit: 10 })).items).toEqual([])
      // Only attempt number attempts + 1 is accepted.
      expect(yield* repo.recordAttempt(yield* attemptOf(delivery, 2, T(2, 30)), after, second!.lease_expires_at!)).toBe(false)
      const fresh = yield* attemptOf(delivery, 1, T(2, 40))
      expect(yield* repo.recordAttempt(fresh, after, second!.lease_expires_at!)).toBe(true)
      expect(yield* stored(delivery)).toEqual({
        ...delivery,
        attempts: 1,
        status: "pending",
        next_attempt_at: T(3, 30),
        first_failed_at: T(2, 30),
        last_attempt_at: T(2, 40),
        lease_expires_at: null,
        updated_at: T(2, 40)
      })
      expect((yield* repo.listAttempts(s.account, webhook.id, { limit: 10 })).items).toEqual([fresh])
      // Once written, the lease is gone: the same write cannot happen twice.
      expect(yield* repo.recordAttempt(yield* attemptOf(delivery, 2, T(2, 50)), after, second!.lease_expires_at!)).toBe(false)
      // Settled deliveries are never claimed again.
      const [third] = yield* repo.claimDue({ now: T(4), limit: 1, maxPerWebhook: 100, leaseUntil: T(5), excludeWebhooks: [] })
      const done = yield* attemptOf(delivery, 2, T(4), { outcome: "succeeded", status_code: 200, response_body: "" })
      expect(yield* repo.recordAttempt(done, { status: "succeeded", next_attempt_at: null, first_failed_at: T(2, 30) }, third!.lease_expires_at!))
        .toBe(true)
      expect(yield* repo.claimDue({ now: T(59), limit: 10, maxPerWebhook: 100, leaseUntil: T(59, 1), excludeWebhooks: [] })).toEqual([])
      expect((yield* stored(delivery)).status).toBe("succeeded")
    }), timeout)

  it.effect("deliveries: concurrent recordAttempt under one lease writes once", () =>
    Effect.gen(function*() {
      const repo = yield* DeliveriesRepo
      const s = yield* setup()
      const delivery = yield* pending(s, s.webhooks[0]!, T(1))
      const [claimed] = yield* repo.claimDue({ now: T(1), limit: 1, maxPerWebhook: 100, leaseUntil: T(2), excludeWebhooks: [] })
      const attempts = yield* Effect.all(Array.from({ length: 10 }, () => attemptOf(delivery, 1, T(1, 5))))
      const results = yield* Effect.all(
        attempts.map((a) => repo.recordAttempt(a, { status: "failed", next_attempt_at: null, first_failed_at: T(1, 5) }, claimed!.lease_expires_at!)),
        { concurrency: "unbounded" }
      )
      expect(results.filter(Boolean).length).toBe(1)
      expect((yield* repo.listAttempts(s.account, delivery.webhook_id, { limit: 100 })).total).toBe(1)
    }), timeout)

  it.effect("deliveries: release and cancel act only under the lease held", () =>
    Effect.gen(function*() {
      const repo = yield* DeliveriesRepo
      const s = yield* setup()
      const delivery = yield* pending(s, s.webhooks[0]!, T(1))
      const [claimed] = yield* repo.claimDue({ now: T(1), limit: 1, maxPerWebhook: 100, leaseUntil: T(5), excludeWebhooks: [] })
      expect(yield* repo.release(delivery.id, T(4))).toBe(false)
      expect(yield* repo.release(delivery.id, claimed!.lease_expires_at!)).toBe(true)
      expect((yield* stored(delivery)).lease_expires_at).toBe(null)
      expect(yield* repo.release(delivery.id, claimed!.lease_expires_at!)).toBe(false)
      const [again] = yield* repo.claimDue({ now: T(2), limit: 1, maxPerWebhook: 100, leaseUntil: T(6), excludeWebhooks: [] })
      expect(again!.id).toBe(delivery.id)
      expect(yield* repo.cancel(delivery.id, T(5), T(3))).toBe(false)
      expect(yield* repo.cancel(delivery.id, again!.lease_expires_at!, T(3))).toBe(true)
      expect(yield* stored(delivery)).toEqual({
        ...delivery,
        status: "cancelled",
        next_attempt_at: null,
        lease_expires_at: null,
        updated_at: T(3)
      })
      expect(yield* repo.cancel(delivery.id, again!.lease_expires_at!, T(3))).toBe(false)
      expect(yield* repo.claimDue({ now: T(59), limit: 1, maxPerWebhook: 100, leaseUntil: T(59, 1), excludeWebhooks: [] })).toEqual([])
    }), timeout)

  it.effect("deliveries: cancelPendingForWebhook cancels that webhook's pending deliveries, leased or not, and nothing else", () =>
    Effect.gen(function*() {
      const repo = yield* DeliveriesRepo
      const s = yield* setup(2)
      const [a, b] = s.webhooks as [WebhookRecord, WebhookRecord]
      const free = yield* pending(s, a, T(1))
      const leased = yield* pending(s, a, T(1), { lease_expires_at: T(9) })
      const done = yield* pending(s, a, T(1), { status: "succeeded", next_attempt_at: null, attempts: 1 })
      const otherHook = yield* pending(s, b, T(1))
      expect(yield* repo.cancelPendingForWebhook(a.id, T(2))).toBe(2)
      for (const row of [free, leased]) {
        expect(yield* stored(row)).toEqual({ ...row, status: "cancelled", next_attempt_at: null, lease_expires_at: null, updated_at: T(2) })
      }
      expect(yield* stored(done)).toEqual(done)
      expect(yield* stored(otherHook)).toEqual(otherHook)
      expect(yield* repo.cancelPendingForWebhook(a.id, T(3))).toBe(0)
      // The old holder of the lease can no longer record its attempt.
      expect(yield* repo.recordAttempt(yield* attemptOf(leased, 1, T(4)), { status: "succeeded", next_attempt_at: null, first_failed_at: null }, T(9)))
        .toBe(false)
    }), timeout)

  it.effect("deliveries: nextDueAt is the earliest instant a pending delivery becomes claimable", () =>
    Effect.gen(function*() {
      const repo = yield* DeliveriesRepo
      const s = yield* setup(2)
      const [a, b] = s.webhooks as [WebhookRecord, WebhookRecord]
      yield* pending(s, a, T(40))
      yield* pending(s, a, T(0), { status: "cancelled", next_attempt_at: null })
      yield* pending(s, b, T(10), { lease_expires_at: T(20) })
      expect(yield* repo.nextDueAt([])).toEqual(Option.some(T(20)))
      expect(yield* repo.nextDueAt([b.id])).toEqual(Option.some(T(40)))
      yield* pending(s, b, T(15))
      expect(yield* repo.nextDueAt([])).toEqual(Option.some(T(15)))
      expect(yield* repo.nextDueAt([a.id])).toEqual(Option.some(T(15)))
    }), timeout)

  it.effect("deliveries: listAttempts pages one webhook's attempts of one account, newest first, both ways", () =>
    Effect.gen(function*() {
      const repo = yield* DeliveriesRepo
      const s = yield* setup(2)
      const [a, b] = s.webhooks as [WebhookRecord, WebhookRecord]
      const made: Array<DeliveryAttemptRecord> = []
      for (let i = 0; i < 3; i++) {
        const delivery = yield* pending(s, a, T(1))
        const [claimed] = yield* repo.claimDue({ now: T(1 + i), limit: 1, maxPerWebhook: 100, leaseUntil: T(2 + i), excludeWebhooks: [] })
        const attempt = yield* attemptOf(delivery, 1, T(1 + i), i === 1 ? { status_code: null, error: "timeout", response_body: null } : {})
        expect(yield* repo.recordAttempt(attempt, { status: "succeeded", next_attempt_at: null, first_failed_at: null }, claimed!.lease_expires_at!))
          .toBe(true)
        made.push(attempt)
      }
      const onB = yield* pending(s, b, T(5))
      const [claimedB] = yield* repo.claimDue({ now: T(5), limit: 1, maxPerWebhook: 100, leaseUntil: T(6), excludeWebhooks: [] })
      yield* repo.recordAttempt(yield* attemptOf(onB, 1, T(5)), { status: "succeeded", next_attempt_at: null, first_failed_at: null }, claimedB!.lease_expires_at!)
      const newest = [...made].reverse()
      const first = yield* repo.listAttempts(s.account, a.id, { limit: 2 })
      expect(first).toEqual({ items: newest.slice(0, 2), total: 3, has_more: true })
      const rest = yield* repo.listAttempts(s.account, a.id, { limit: 2, startingAfter: newest[1]!.id })
      expect(rest).toEqual({ items: newest.slice(2), total: 3, has_more: false })
      const back = yield* repo.listAttempts(s.account, a.id, { limit: 1, endingBefore: newest[2]!.id })
      expect(back).toEqual({ items: newest.slice(1, 2), total: 3, has_more: true })
      expect((yield* repo.listAttempts(yield* freshAccount, a.id, { limit: 10 })).total).toBe(0)
    }), timeout)
}
