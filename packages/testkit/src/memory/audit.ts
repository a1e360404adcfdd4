import { type AuditEntryRecord, AuditRepo } from "@mzk/core"
import { Effect } from "effect"
import { byId, type MemoryDb, paginate } from "./db.js"

export const memoryAudit = (db: MemoryDb) => {
  const entries = db.table<AuditEntryRecord>("audit_log")
  return AuditRepo.of({
    insert: (entry) => db.write(Effect.sync(() => void entries.set(entry.id, entry))),
    list: (accountId, query) =>
      Effect.sync(() =>
        paginate(
          [...entries.values()].filter((e) =>
            e.account_id === accountId &&
            (query.action === undefined || e.action === query.action) &&
            (query.target_id === undefined || e.target.id === query.target_id) &&
            (query.actor_id === undefined || e.actor.id === query.actor_id)
          ),
          query
        )
      ),
    deleteBefore: (before, limit) =>
      db.write(Effect.sync(() => {
        const due = [...entries.values()].filter((e) => e.created_at < before).sort(byId).slice(0, limit)
        for (const entry of due) entries.delete(entry.id)
        return due.length
      }))
  })
}
