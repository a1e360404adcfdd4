import { DeliveriesRepo, type DeliveryAttemptRecord, type DeliveryRecord, type Timestamp } from "@mzk/core"
import { Effect, Option } from "effect"
import { type SelectQueryBuilder, sql } from "kysely"
import type { SqlConnection } from "../connection.js"
import type { Database } from "../schema.js"
import { pickCapped } from "./capped.js"
import { page } from "./paging.js"

/** How many due rows a SQLite claim reads per delivery it may take, to pass over capped webhooks. */
const SCAN_FACTOR = 4

export const sqlDeliveries = (conn: SqlConnection) => {
  const postgres = conn.dialect === "postgres"

  /** The row is still pending and still held under this lease: the fence every engine write passes. */
  const underLease = (id: string, lease: Timestamp) =>
    (q: import("kysely").UpdateQueryBuilder<import("../schema.js").Database, "deliveries", "deliveries", import("kysely").UpdateResult>) =>
      q.where("id", "=", id).where("status", "=", "pending").where("lease_expires_at", "=", lease)

  return DeliveriesRepo.of({
    insertMany: (rows) =>
      rows.length === 0
        ? Effect.void
        : conn.execute((db) => db.insertInto("deliveries").values([...rows])).pipe(
          Effect.zipRight(conn.announce("deliveries"))
        ),
    listByEvent: (eventId) =>
      conn.rows((db) => db.selectFrom("deliveries").selectAll().where("event_id", "=", eventId).orderBy("id"))
        .pipe(Effect.map((rows) => rows as Array<DeliveryRecord>)),
    claimDue: ({ excludeWebhooks, leaseUntil, limit, maxPerWebhook, now }) =>
      conn.transaction(Effect.gen(function*() {
        // Claimable now. Applied to the locked rows too: Postgres re-checks a locking query's own
        // conditions against a row another claim just committed, not those inside a subquery.
        const claimable = <Q extends SelectQueryBuilder<Database, "deliveries", object>>(q: Q) =>
          q.where("status", "=", "pending").where("next_attempt_at", "<=", now)
            .where((eb) => eb.or([eb("lease_expires_at", "is", null), eb("lease_expires_at", "<=", now)])) as Q
        const picked = postgres ? yield* rankedPick() : yield* scannedPick()
        if (picked.length === 0) return []
        const rows = yield* conn.rows((db) =>
          db.updateTable("deliveries").set({ lease_expires_at: leaseUntil, updated_at: now })
            .where("id", "in", picked).where("status", "=", "pending")
            .where((eb) => eb.or([eb("lease_expires_at", "is", null), eb("lease_expires_at", "<=", now)]))
            .returningAll()
        )
        return (rows as Array<DeliveryRecord>).sort((a, b) =>
          a.next_attempt_at! < b.next_attempt_at! ? -1 : a.next_attempt_at! > b.next_attempt_at! ? 1 : a.id < b.id ? -1 : 1
        )

        /**
         * SQLite has one writer, so nothing else claims meanwhile: read the earliest due rows in
         * index order and cap them per webhook here, which is far cheaper than ranking every due row.
         */
        function scannedPick() {
          return conn.rows((db) =>
            claimable(db.selectFrom("deliveries")).select(["id", "webhook_id"])
              .$if(excludeWebhooks.length > 0, (q) => q.where("webhook_id", "not in", [...excludeWebhooks]))
              .orderBy("next_attempt_at").orderBy("id").limit(limit * SCAN_FACTOR)
          ).pipe(Effect.map((due) => pickCapped(due, { limit, cap: maxPerWebhook, group: (row) => row.webhook_id })))
        }

        /**
         * Postgres: the due rows ranked within their webhook, the first `maxPerWebhook` of each
         * kept, and of those exactly `limit` locked with SKIP LOCKED: concurrent claims pass over
         * each other's rows and lock nothing they do not take, so together they drain all that is due.
         */
        function rankedPick() {
          return conn.rows((db) => {
            const ranked = claimable(db.selectFrom("deliveries"))
              .select(["id", sql<number>`row_number() over (partition by webhook_id order by next_attempt_at, id)`.as("rank")])
              .$if(excludeWebhooks.length > 0, (q) => q.where("webhook_id", "not in", [...excludeWebhooks]))
            return claimable(db.selectFrom("deliveries")).select("id")
              .where("id", "in", db.selectFrom(ranked.as("ranked")).select("ranked.id").where("ranked.rank", "<=", maxPerWebhook))
              .orderBy("next_attempt_at").orderBy("id").limit(limit)
              .forUpdate().skipLocked()
          }).pipe(Effect.map((rows) => rows.map((r) => r.id)))
        }
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
    nextDueAt: (excludeWebhooks) =>
      conn.first((db) =>
        db.selectFrom("deliveries")
          .select(sql<string | null>`min(case when lease_expires_at is not null and lease_expires_at > next_attempt_at then lease_expires_at else next_attempt_at end)`.as("due"))
          .where("status", "=", "pending")
          .$if(excludeWebhooks.length > 0, (q) => q.where("webhook_id", "not in", [...excludeWebhooks]))
      ).pipe(Effect.map((row) => Option.fromNullable(Option.getOrUndefined(row)?.due as Timestamp | null | undefined))),
    listAttempts: (accountId, webhookId, request) =>
      page(conn, request, (db) =>
        db.selectFrom("delivery_attempts").where("account_id", "=", accountId).where("webhook_id", "=", webhookId),
        (row: DeliveryAttemptRecord) => row)
  })
}
