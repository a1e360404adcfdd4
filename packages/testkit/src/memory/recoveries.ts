import { RecoveriesRepo, type RecoveryRecord } from "@mzk/core"
import { Effect, Option } from "effect"
import { byId, type MemoryDb, paginate } from "./db.js"

export const memoryRecoveries = (db: MemoryDb) => {
  const recoveries = db.table<RecoveryRecord>("webhook_recoveries")
  const held = (id: string, lease: string) => {
    const row = recoveries.get(id)
    return row !== undefined && row.status === "running" && row.lease_expires_at === lease ? row : undefined
  }
  return RecoveriesRepo.of({
    insert: (recovery) => db.write(Effect.sync(() => void recoveries.set(recovery.id, recovery))),
    get: (accountId, webhookId, id) =>
      Effect.sync(() => {
        const row = recoveries.get(id)
        return Option.fromNullable(row !== undefined && row.account_id === accountId && row.webhook_id === webhookId ? row : undefined)
      }),
    list: (accountId, webhookId, page) =>
      Effect.sync(() => paginate([...recoveries.values()].filter((r) => r.account_id === accountId && r.webhook_id === webhookId), page)),
    claim: ({ leaseUntil, limit, now }) =>
      db.write(Effect.gen(function*() {
        const due = [...recoveries.values()]
          .filter((r) => r.status === "running" && (r.lease_expires_at === null || r.lease_expires_at <= now))
          .sort((a, b) => (a.updated_at < b.updated_at ? -1 : a.updated_at > b.updated_at ? 1 : byId(a, b)))
          .slice(0, Math.max(0, limit))
        // Yield between the read and the write: without the lock, the claim race tests must fail.
        yield* Effect.yieldNow()
        return due.map((row) => {
          const claimed: RecoveryRecord = { ...row, lease_expires_at: leaseUntil }
          recoveries.set(row.id, claimed)
          return claimed
        })
      })),
    advance: (id, lease, progress) =>
      db.write(Effect.sync(() => {
        const row = held(id, lease)
        if (row === undefined) return false
        recoveries.set(id, { ...row, ...progress, lease_expires_at: null })
        return true
      })),
    release: (id, lease) =>
      db.write(Effect.sync(() => {
        const row = held(id, lease)
        if (row === undefined) return false
        recoveries.set(id, { ...row, lease_expires_at: null })
        return true
      })),
    deleteEnded: (before, limit) =>
      db.write(Effect.sync(() => {
        const ended = [...recoveries.values()]
          .filter((r) => r.status !== "running" && r.completed_at !== null && r.completed_at < before)
          .sort(byId)
          .slice(0, Math.max(0, limit))
        for (const row of ended) recoveries.delete(row.id)
        return ended.length
      }))
  })
}
