import { type AuditEntryRecord, AuditRepo } from "@mzk/core"
import { Effect } from "effect"
import type { Insertable, Selectable } from "kysely"
import type { SqlConnection } from "../connection.js"
import type { AuditLogTable } from "../schema.js"
import { page } from "./paging.js"

const toRecord = (row: Selectable<AuditLogTable>): AuditEntryRecord => ({
  id: row.id,
  account_id: row.account_id,
  action: row.action,
  actor: { type: row.actor_type, id: row.actor_id },
  target: { type: row.target_type, id: row.target_id, name: row.target_name },
  request_id: row.request_id,
  ip_address: row.ip_address,
  user_agent: row.user_agent,
  changes: row.changes === null ? null : JSON.parse(row.changes),
  created_at: row.created_at
}) as AuditEntryRecord

const toRow = (entry: AuditEntryRecord): Insertable<AuditLogTable> => ({
  id: entry.id,
  account_id: entry.account_id,
  action: entry.action,
  actor_type: entry.actor.type,
  actor_id: entry.actor.id,
  target_type: entry.target.type,
  target_id: entry.target.id,
  target_name: entry.target.name,
  request_id: entry.request_id,
  ip_address: entry.ip_address,
  user_agent: entry.user_agent,
  changes: entry.changes === null ? null : JSON.stringify(entry.changes),
  created_at: entry.created_at
})

export const sqlAudit = (conn: SqlConnection) =>
  AuditRepo.of({
    insert: (entry) => Effect.asVoid(conn.execute((db) => db.insertInto("audit_log").values(toRow(entry)))),
    list: (accountId, query) =>
      page(conn, query, (db) =>
        db.selectFrom("audit_log").where("account_id", "=", accountId)
          .$if(query.action !== undefined, (q) => q.where("action", "=", query.action!))
          .$if(query.target_id !== undefined, (q) => q.where("target_id", "=", query.target_id!))
          .$if(query.actor_id !== undefined, (q) => q.where("actor_id", "=", query.actor_id!)), toRecord),
    deleteBefore: (before, limit) =>
      conn.affected((db) =>
        db.deleteFrom("audit_log").where("id", "in", (eb) =>
          eb.selectFrom("audit_log").select("id").where("created_at", "<", before).orderBy("created_at").limit(limit))
      )
  })
