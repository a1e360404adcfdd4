import { RecoveriesRepo, type RecoveryRecord, type Timestamp } from "@mzk/core"
import { Effect, Option } from "effect"
import type { ExpressionBuilder, Selectable, UpdateQueryBuilder, UpdateResult } from "kysely"
import type { SqlConnection } from "../connection.js"
import type { Database, WebhookRecoveriesTable } from "../schema.js"
import { page } from "./paging.js"

const toRecord = (row: Selectable<WebhookRecoveriesTable>) => ({ ...row, requeued: Number(row.requeued) }) as RecoveryRecord

/** Running, and held by no claim at `now`. */
const claimable = (now: Timestamp) => (eb: ExpressionBuilder<Database, "webhook_recoveries">) =>
  eb.and([eb("status", "=", "running"), eb.or([eb("lease_expires_at", "is", null), eb("lease_expires_at", "<=", now)])])

/** Still running under this lease: the fence of every write of the worker that holds it. */
const underLease = (id: string, lease: Timestamp) =>
  (q: UpdateQueryBuilder<Database, "webhook_recoveries", "webhook_recoveries", UpdateResult>) =>
    q.where("id", "=", id).where("status", "=", "running").where("lease_expires_at", "=", lease)

export const sqlRecoveries = (conn: SqlConnection) =>
  RecoveriesRepo.of({
    insert: (recovery) =>
      conn.execute((db) => db.insertInto("webhook_recoveries").values(recovery)).pipe(
        Effect.zipRight(conn.dialect.announce(conn, "recoveries"))
      ),
    get: (accountId, webhookId, id) =>
      conn.first((db) =>
        db.selectFrom("webhook_recoveries").selectAll().where("id", "=", id).where("account_id", "=", accountId).where("webhook_id", "=", webhookId)
      ).pipe(Effect.map(Option.map(toRecord))),
    list: (accountId, webhookId, request) =>
      page(conn, request, (db) => db.selectFrom("webhook_recoveries").where("account_id", "=", accountId).where("webhook_id", "=", webhookId), toRecord),
    claim: ({ leaseUntil, limit, now }) =>
      limit <= 0
        ? Effect.succeed([])
        : conn.transaction(Effect.gen(function*() {
          const picked = yield* conn.rows((db) =>
            db.selectFrom("webhook_recoveries").select("id").where(claimable(now))
              .orderBy("updated_at").orderBy("id").limit(limit).$call(conn.dialect.takeRows)
          )
          if (picked.length === 0) return []
          const rows = yield* conn.rows((db) =>
            db.updateTable("webhook_recoveries").set({ lease_expires_at: leaseUntil })
              .where("id", "in", picked.map((row) => row.id))
              // A second guard besides the pick: only rows that are still claimable.
              .where(claimable(now))
              .returningAll()
          )
          return rows.map(toRecord).sort((a, b) => (a.updated_at < b.updated_at ? -1 : a.updated_at > b.updated_at ? 1 : a.id < b.id ? -1 : 1))
        })),
    advance: (id, lease, progress) =>
      conn.affected((db) => db.updateTable("webhook_recoveries").set({ ...progress, lease_expires_at: null }).$call(underLease(id, lease)))
        .pipe(Effect.map((count) => count > 0)),
    release: (id, lease) =>
      conn.affected((db) => db.updateTable("webhook_recoveries").set({ lease_expires_at: null }).$call(underLease(id, lease)))
        .pipe(Effect.map((count) => count > 0)),
    deleteEnded: (before, limit) =>
      conn.affected((db) =>
        db.deleteFrom("webhook_recoveries").where("id", "in", (eb) =>
          eb.selectFrom("webhook_recoveries").select("id").where("status", "<>", "running").where("completed_at", "<", before)
            .orderBy("id").limit(limit))
      )
  })
