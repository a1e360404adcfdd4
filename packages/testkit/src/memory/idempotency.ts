import { type IdempotencyRecord, IdempotencyRepo } from "@mzk/core"
import { Effect, Option } from "effect"
import type { MemoryDb } from "./db.js"

const idOf = (accountId: string, key: string) => `${accountId}\u0000${key}`

export const memoryIdempotency = (db: MemoryDb) => {
  const records = db.table<IdempotencyRecord>("idempotency_keys")
  const held = (accountId: string, key: string, requestId: string) => {
    const record = records.get(idOf(accountId, key))
    return record !== undefined && record.request_id === requestId && record.response === null ? record : undefined
  }
  return IdempotencyRepo.of({
    claim: (record, now) =>
      db.write(Effect.gen(function*() {
        const id = idOf(record.account_id, record.key)
        const existing = records.get(id)
        // Yield between the check and the write: without the lock, the race test must fail.
        yield* Effect.yieldNow()
        const free = existing === undefined || existing.expires_at <= now ||
          (existing.response === null && existing.locked_until !== null && existing.locked_until <= now)
        if (!free) return Option.some(existing)
        records.set(id, record)
        return Option.none()
      })),
    settle: (accountId, key, requestId, response) =>
      db.write(Effect.sync(() => {
        const record = held(accountId, key, requestId)
        if (record === undefined) return false
        records.set(idOf(accountId, key), { ...record, response, locked_until: null })
        return true
      })),
    release: (accountId, key, requestId) =>
      db.write(Effect.sync(() => held(accountId, key, requestId) !== undefined && records.delete(idOf(accountId, key)))),
    deleteExpired: (now) =>
      db.write(Effect.sync(() => {
        let deleted = 0
        for (const [id, record] of records) {
          if (record.expires_at <= now) {
            records.delete(id)
            deleted++
          }
        }
        return deleted
      }))
  })
}
