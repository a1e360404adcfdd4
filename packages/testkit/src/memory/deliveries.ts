import { DeliveriesRepo, type DeliveryAttemptRecord, type DeliveryRecord, takeInTurns, type Timestamp } from "@mzk/core"
import { Effect, Option } from "effect"
import { byId, type MemoryDb, paginate } from "./db.js"

export const memoryDeliveries = (db: MemoryDb) => {
  const rows = db.table<DeliveryRecord>("deliveries")
  /**
   * The pending rows' ids, as a table of its own so a rolled-back transaction restores it with
   * the rows: claims and `nextDueAt` scan only these, not every delivery ever made.
   */
  const pendingIds = db.table<true>("deliveries_pending")
  const deliveries = {
    get: (id: string) => rows.get(id),
    values: () => rows.values(),
    *pending() {
      for (const id of pendingIds.keys()) yield rows.get(id)!
    },
    set: (id: string, row: DeliveryRecord) => {
      rows.set(id, row)
      if (row.status === "pending") pendingIds.set(id, true)
      else pendingIds.delete(id)
    }
  }
  const attempts = db.table<DeliveryAttemptRecord>("delivery_attempts")
  const held = (id: string, lease: Timestamp) => {
    const row = deliveries.get(id)
    return row !== undefined && row.status === "pending" && row.lease_expires_at === lease ? row : undefined
  }
  const claimableAt = (row: DeliveryRecord) =>
    row.lease_expires_at !== null && row.lease_expires_at > row.next_attempt_at! ? row.lease_expires_at : row.next_attempt_at!
  /** One manual attempt, due now (`DeliveriesRepo.requeue`). */
  const requeued = (row: DeliveryRecord, at: Timestamp): DeliveryRecord => ({
    ...row,
    status: "pending",
    trigger: "manual",
    next_attempt_at: at,
    lease_expires_at: null,
    updated_at: at
  })
  const cancelled = (row: DeliveryRecord, at: Timestamp): DeliveryRecord => ({
    ...row,
    status: "cancelled",
    next_attempt_at: null,
    lease_expires_at: null,
    updated_at: at
  })

  return DeliveriesRepo.of({
    insertMany: (inserted) => db.write(Effect.sync(() => inserted.forEach((row) => deliveries.set(row.id, row)))),
    listByEvent: (eventId) => Effect.sync(() => [...deliveries.values()].filter((d) => d.event_id === eventId).sort(byId)),
    claimDue: ({ excludeWebhooks, heldByAccount, leaseUntil, limit, maxPerAccount, maxPerWebhook, now }) =>
      db.write(Effect.gen(function*() {
        const due: Array<DeliveryRecord> = []
        for (const d of deliveries.pending()) {
          if (
            d.next_attempt_at !== null && d.next_attempt_at <= now &&
            (d.lease_expires_at === null || d.lease_expires_at <= now) && !excludeWebhooks.includes(d.webhook_id)
          ) due.push(d)
        }
        const earliest = (a: DeliveryRecord, b: DeliveryRecord) =>
          a.next_attempt_at! < b.next_attempt_at! ? -1 : a.next_attempt_at! > b.next_attempt_at! ? 1 : byId(a, b)
        const picked = takeInTurns(due.sort(earliest), {
          limit,
          owner: (d) => d.account_id,
          cap: maxPerAccount ?? Number.POSITIVE_INFINITY,
          held: maxPerAccount === undefined ? undefined : heldByAccount,
          within: { group: (d) => d.webhook_id, cap: maxPerWebhook }
        }).sort(earliest)
        // Yield between the read and the write: without the lock, the claim race tests must fail.
        yield* Effect.yieldNow()
        return picked.map((row) => {
          const claimed: DeliveryRecord = { ...row, lease_expires_at: leaseUntil, updated_at: now }
          deliveries.set(row.id, claimed)
          return claimed
        })
      })),
    recordAttempt: (attempt, after, lease) =>
      db.write(Effect.gen(function*() {
        const row = held(attempt.delivery_id, lease)
        yield* Effect.yieldNow()
        if (row === undefined || row.attempts !== attempt.attempt - 1) return false
        deliveries.set(row.id, {
          ...row,
          attempts: attempt.attempt,
          status: after.status,
          next_attempt_at: after.next_attempt_at,
          first_failed_at: after.first_failed_at,
          last_attempt_at: attempt.attempted_at,
          lease_expires_at: null,
          updated_at: attempt.attempted_at
        })
        attempts.set(attempt.id, attempt)
        return true
      })),
    release: (id, lease) =>
      db.write(Effect.sync(() => {
        const row = held(id, lease)
        if (row === undefined) return false
        deliveries.set(id, { ...row, lease_expires_at: null })
        return true
      })),
    cancel: (id, lease, at) =>
      db.write(Effect.sync(() => {
        const row = held(id, lease)
        if (row === undefined) return false
        deliveries.set(id, cancelled(row, at))
        return true
      })),
    cancelPendingForWebhook: (webhookId, at) =>
      db.write(Effect.sync(() => {
        let count = 0
        for (const row of deliveries.pending()) {
          if (row.webhook_id === webhookId) {
            deliveries.set(row.id, cancelled(row, at))
            count++
          }
        }
        return count
      })),
    nextDueAt: (excludeWebhooks, excludeAccounts = []) =>
      Effect.sync(() => {
        let earliest: Timestamp | undefined
        for (const row of deliveries.pending()) {
          if (row.next_attempt_at === null || excludeWebhooks.includes(row.webhook_id) || excludeAccounts.includes(row.account_id)) continue
          const at = claimableAt(row)
          if (earliest === undefined || at < earliest) earliest = at
        }
        return Option.fromNullable(earliest)
      }),
    get: (accountId, id) =>
      Effect.sync(() => {
        const row = deliveries.get(id)
        return Option.fromNullable(row !== undefined && row.account_id === accountId ? row : undefined)
      }),
    requeue: (id, at) =>
      db.write(Effect.gen(function*() {
        const row = deliveries.get(id)
        yield* Effect.yieldNow()
        if (row === undefined || row.status === "pending") return Option.none()
        const queued = requeued(row, at)
        deliveries.set(id, queued)
        return Option.some(queued)
      })),
    requeueFailed: ({ after, at, limit, since, until, webhookId }) =>
      db.write(Effect.sync(() => {
        const batch = [...deliveries.values()]
          .filter((d) =>
            d.webhook_id === webhookId && (d.status === "failed" || d.status === "cancelled") &&
            d.created_at >= since && d.created_at <= until && (after === null || d.id > after)
          )
          .sort(byId)
          .slice(0, Math.max(0, limit))
        for (const row of batch) deliveries.set(row.id, requeued(row, at))
        return { scanned: batch.length, last: batch.at(-1)?.id ?? null, requeued: batch.length }
      })),
    listAttempts: (accountId, webhookId, page) =>
      Effect.sync(() =>
        paginate([...attempts.values()].filter((a) => a.account_id === accountId && a.webhook_id === webhookId), page)
      )
  })
}
