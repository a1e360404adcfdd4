import { type ApiKeyRecord, isActiveKey, KeyLimitReached, KeysRepo } from "@mzk/core"
import { Effect, Option } from "effect"
import { byId, type MemoryDb } from "./db.js"

export const memoryKeys = (db: MemoryDb) => {
  const keys = db.table<ApiKeyRecord>("keys")
  const active = (accountId: string, now: string) => [...keys.values()].filter((k) => k.account_id === accountId && isActiveKey(k, now))
  /** The account's key `id` if it is active at `now`. */
  const activeOwn = (accountId: string, id: string, now: string) => {
    const key = keys.get(id)
    return key !== undefined && key.account_id === accountId && isActiveKey(key, now) ? key : undefined
  }
  return KeysRepo.of({
    insert: (key, { maxActive, now }) =>
      db.write(Effect.gen(function*() {
        const count = active(key.account_id, now).length
        // Yield between the check and the write: without the lock, the race tests must fail.
        yield* Effect.yieldNow()
        if (count >= maxActive) {
          return yield* new KeyLimitReached({ message: `An account may hold at most ${maxActive} active keys` })
        }
        keys.set(key.id, key)
      })),
    findByHash: (hash) => Effect.sync(() => Option.fromNullable([...keys.values()].find((k) => k.hash === hash))),
    listActive: (accountId, now) => Effect.sync(() => active(accountId, now).sort(byId)),
    revoke: (accountId, id, at) =>
      db.write(Effect.sync(() => {
        const key = activeOwn(accountId, id, at)
        if (key === undefined) return Option.none()
        const revoked = { ...key, revoked_at: at }
        keys.set(id, revoked)
        return Option.some(revoked)
      })),
    roll: (accountId, id, { now, replacedBy, until }) =>
      db.write(Effect.gen(function*() {
        const key = activeOwn(accountId, id, now)
        // Yield between the check and the write: without the lock, the race tests must fail.
        yield* Effect.yieldNow()
        if (key === undefined) return { _tag: "not_found" } as const
        if (key.replaced_by !== null) return { _tag: "already_rolled", key } as const
        // An earlier expiry stands: a roll never lengthens a key's life.
        const expires_at = key.expires_at !== null && key.expires_at < until ? key.expires_at : until
        const rolled = { ...key, expires_at, replaced_by: replacedBy }
        keys.set(id, rolled)
        return { _tag: "rolled", key: rolled, previousExpiresAt: key.expires_at } as const
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
