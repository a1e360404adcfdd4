import { type ApiKeyRecord, KeyLimitReached, KeysRepo } from "@mzk/core"
import { Effect, Option } from "effect"
import { byId, type MemoryDb } from "./db.js"

export const memoryKeys = (db: MemoryDb) => {
  const keys = db.table<ApiKeyRecord>("keys")
  const active = (accountId: string) => [...keys.values()].filter((k) => k.account_id === accountId && k.revoked_at === null)
  return KeysRepo.of({
    insert: (key, { maxActive }) =>
      db.write(Effect.gen(function*() {
        const count = active(key.account_id).length
        // Yield between the check and the write: without the lock, the race tests must fail.
        yield* Effect.yieldNow()
        if (count >= maxActive) {
          return yield* new KeyLimitReached({ message: `An account may hold at most ${maxActive} active keys` })
        }
        keys.set(key.id, key)
      })),
    findByHash: (hash) => Effect.sync(() => Option.fromNullable([...keys.values()].find((k) => k.hash === hash))),
    listActive: (accountId) => Effect.sync(() => active(accountId).sort(byId)),
    revoke: (accountId, id, at) =>
      db.write(Effect.sync(() => {
        const key = keys.get(id)
        if (key === undefined || key.account_id !== accountId || key.revoked_at !== null) return Option.none()
        const revoked = { ...key, revoked_at: at }
        keys.set(id, revoked)
        return Option.some(revoked)
      })),
    touch: (id, at, staleBefore) =>
      db.write(Effect.sync(() => {
        const key = keys.get(id)
        if (key === undefined || (key.last_used_at !== null && key.last_used_at >= staleBefore)) return false
        keys.set(id, { ...key, last_used_at: at })
        return true
      }))
  })
}
