import { DeliveriesRepo, type DeliveryAttemptRecord, type DeliveryId, type DeliveryRecord, type Timestamp } from "@mzk/core"
import { Effect, Option } from "effect"
import { sql, type UpdateQueryBuilder, type UpdateResult } from "kysely"
import { deliveryUnleased } from "../claims.js"
import type { SqlConnection } from "../connection.js"
import type { Database } from "../schema.js"
import { page } from "./paging.js"

const SETTLED = ["succeeded", "failed", "cancelled"]
const UNDELIVERED = ["failed", "cancelled"]

export const sqlDeliveries = (conn: SqlConnection) => {
  const { dialect } = conn

  /** The row is still pending and still held under this lease: the fence every engine write passes. */
  const underLease = (id: string, lease: Timestamp) =>
    (q: UpdateQueryBuilder<Database, "deliveries", "deliveries", UpdateResult>) =>
      q.where("id", "=", id).where("status", "=", "pending").where("lease_expires_at", "=", lease)

  /** Settled deliveries, queued for one manual attempt due at `at` (`DeliveriesRepo.requeue`). */
  const requeue = (at: Timestamp) =>
    (q: UpdateQueryBuilder<Database, "deliveries", "deliveries", UpdateResult>) =>
      q.set({ status: "pending", trigger: "manual", next_attempt_at: at, lease_expires_at: null, updated_at: at })
        .where("status", "in", SETTLED)

  return DeliveriesRepo.of({
    insertMany: (rows) =>
      rows.length === 0
        ? Effect.void
        : conn.execute((db) => db.insertInto("deliveries").values([...rows])).pipe(
          Effect.zipRight(dialect.announce(conn, "deliveries"))
        ),
    listByEvent: (eventId) =>
      conn.rows((db) => db.selectFrom("deliveries").selectAll().where("event_id", "=", eventId).orderBy("id"))
        .pipe(Effect.map((rows) => rows as Array<DeliveryRecord>)),
    // The dialect picks the rows (and keeps concurrent claims apart); the lease is set here, on
    // rows that are still unleased.
    claimDue: (claim) =>
      conn.transaction(Effect.gen(function*() {
        const picked = yield* dialect.pickDeliveries(conn, claim)
        if (picked.length === 0) return []
        const rows = yield* conn.rows((db) =>
          db.updateTable("deliveries").set({ lease_expires_at: claim.leaseUntil, updated_at: claim.now })
            .where("id", "in", picked).where("status", "=", "pending").where(deliveryUnleased(claim.now))
            .returningAll()
        )
        return (rows as Array<DeliveryRecord>).sort((a, b) =>
          a.next_attempt_at! < b.next_attempt_at! ? -1 : a.next_attempt_at! > b.next_attempt_at! ? 1 : a.id < b.id ? -1 : 1
        )
      })),
    recordAttempt: (attempt, after, lease) =>
      conn.transaction(Effect.gen(function*() {
        const updated = yield* conn.affected((db) =>
          db.updateTable("deliveries").set({
            attempts: attempt.attempt,
            status: after.status,
            next_attempt_at: after.next_attempt_at,
            first_failed_at: after.first_failed_at,
            last_attempt_at: attempt.attempted_at,
            updated_at: attempt.attempted_at,
            lease_expires_at: null
          }).$call(underLease(attempt.delivery_id, lease)).where("attempts", "=", attempt.attempt - 1)
        )
        if (updated === 0) return false
        yield* conn.execute((db) => db.insertInto("delivery_attempts").values(attempt))
        return true
      })),
    release: (id, lease) =>
      conn.affected((db) => db.updateTable("deliveries").set({ lease_expires_at: null }).$call(underLease(id, lease)))
        .pipe(Effect.map((count) => count > 0)),
    cancel: (id, lease, at) =>
      conn.affected((db) =>
        db.updateTable("deliveries").set({ status: "cancelled", next_attempt_at: null, lease_expires_at: null, updated_at: at })
          .$call(underLease(id, lease))
      ).pipe(Effect.map((count) => count > 0)),
    cancelPendingForWebhook: (webhookId, at) =>
      conn.affected((db) =>
        db.updateTable("deliveries").set({ status: "cancelled", next_attempt_at: null, lease_expires_at: null, updated_at: at })
          .where("webhook_id", "=", webhookId).where("status", "=", "pending")
      ),
    // A leased row is not claimable before its lease lapses, so it is due at the later of the two.
    nextDueAt: (excludeWebhooks, excludeAccounts = []) =>
      conn.first((db) =>
        db.selectFrom("deliveries")
          .select(sql<string | null>`min(case when lease_expires_at is not null and lease_expires_at > next_attempt_at then lease_expires_at else next_attempt_at end)`.as("due"))
          .where("status", "=", "pending")
          .$if(excludeWebhooks.length > 0, (q) => q.where("webhook_id", "not in", [...excludeWebhooks]))
          .$if(excludeAccounts.length > 0, (q) => q.where("account_id", "not in", [...excludeAccounts]))
      ).pipe(Effect.map((row) => Option.fromNullable(Option.getOrUndefined(row)?.due as Timestamp | null | undefined))),
    get: (accountId, id) =>
      conn.first((db) => db.selectFrom("deliveries").selectAll().where("id", "=", id).where("account_id", "=", accountId))
        .pipe(Effect.map((row) => row as Option.Option<DeliveryRecord>)),
    requeue: (id, at) =>
      conn.first((db) => db.updateTable("deliveries").$call(requeue(at)).where("id", "=", id).returningAll()).pipe(
        Effect.tap((row) => (Option.isSome(row) ? dialect.announce(conn, "deliveries") : Effect.void)),
        Effect.map((row) => row as Option.Option<DeliveryRecord>)
      ),
    requeueFailed: ({ after, at, limit, since, until, webhookId }) =>
      conn.transaction(Effect.gen(function*() {
        const batch = yield* conn.rows((db) =>
          db.selectFrom("deliveries").select("id")
            .where("webhook_id", "=", webhookId).where("status", "in", UNDELIVERED)
            .where("created_at", ">=", since).where("created_at", "<=", until)
            .$if(after !== null, (q) => q.where("id", ">", after!))
            .orderBy("id").limit(limit)
        )
        if (batch.length === 0) return { scanned: 0, last: null, requeued: 0 }
        // Still undelivered: a retry may have queued one meanwhile.
        const requeued = yield* conn.affected((db) =>
          db.updateTable("deliveries").$call(requeue(at)).where("id", "in", batch.map((row) => row.id)).where("status", "in", UNDELIVERED)
        )
        if (requeued > 0) yield* dialect.announce(conn, "deliveries")
        return { scanned: batch.length, last: batch.at(-1)!.id as DeliveryId, requeued }
      })),
    listAttempts: (accountId, webhookId, request) =>
      page(conn, request, (db) =>
        db.selectFrom("delivery_attempts").where("account_id", "=", accountId).where("webhook_id", "=", webhookId),
        (row: DeliveryAttemptRecord) => row)
  })
}
