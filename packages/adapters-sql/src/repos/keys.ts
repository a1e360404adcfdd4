import { type ApiKeyRecord, isActiveKey, KeyLimitReached, KeysRepo } from "@mzk/core"
import { Effect, Option } from "effect"
import type { Selectable } from "kysely"
import type { Executor, SqlConnection } from "../connection.js"
import type { ApiKeysTable } from "../schema.js"
import { insertUnderAccountLimit } from "./accountLimit.js"

const toRecord = (row: Selectable<ApiKeysTable>): ApiKeyRecord => ({ ...row, scopes: JSON.parse(row.scopes), metadata: JSON.parse(row.metadata) }) as ApiKeyRecord

export const sqlKeys = (conn: SqlConnection) => {
  const byHash = conn.statement((db, $: { hash: string }) => db.selectFrom("api_keys").selectAll().where("hash", "=", $.hash))
  const active = conn.statement((db, $: { accountId: string; now: string }) =>
    db.selectFrom("api_keys").selectAll().where("account_id", "=", $.accountId).where("revoked_at", "is", null)
      .where((eb) => eb.or([eb("expires_at", "is", null), eb("expires_at", ">", $.now)])).orderBy("id", "desc")
  )
  const touch = conn.statement((db, $: { id: string; at: string; staleBefore: string }) =>
    db.updateTable("api_keys").set({ last_used_at: $.at }).where("id", "=", $.id)
      .where((eb) => eb.or([eb("last_used_at", "is", null), eb("last_used_at", "<", $.staleBefore)]))
  )
  return KeysRepo.of({
    insert: (key, { maxActive, now }) =>
      insertUnderAccountLimit(conn, {
        accountId: key.account_id,
        max: maxActive,
        count: (db) =>
          db.selectFrom("api_keys").select((eb) => eb.fn.countAll<number | string>().as("count"))
            .where("account_id", "=", key.account_id).where("revoked_at", "is", null)
            .where((eb) => eb.or([eb("expires_at", "is", null), eb("expires_at", ">", now)])),
        insert: (db) => db.insertInto("api_keys").values({ ...key, scopes: JSON.stringify(key.scopes), metadata: JSON.stringify(key.metadata) }),
        full: () => new KeyLimitReached({ message: `An account may hold at most ${maxActive} active keys` })
      }),
    findByHash: (hash) => byHash.first({ hash }, toRecord),
    listActive: (accountId, now) => active.rows({ accountId, now }, toRecord),
    revoke: (accountId, id, at) =>
      conn.first((db) =>
        db.updateTable("api_keys").set({ revoked_at: at })
          .where("id", "=", id).where("account_id", "=", accountId).where("revoked_at", "is", null)
          .where((eb) => eb.or([eb("expires_at", "is", null), eb("expires_at", ">", at)]))
          .returningAll()
      ).pipe(Effect.map(Option.map(toRecord))),
    roll: (accountId, id, { now, replacedBy, until }) =>
      conn.transaction(Effect.gen(function*() {
        const own = (db: Executor) => db.selectFrom("api_keys").selectAll().where("id", "=", id).where("account_id", "=", accountId)
        const before = Option.map(yield* conn.first(own), toRecord)
        if (Option.isNone(before) || !isActiveKey(before.value, now)) return { _tag: "not_found" } as const
        if (before.value.replaced_by !== null) return { _tag: "already_rolled", key: before.value } as const
        const rolled = yield* conn.first((db) =>
          db.updateTable("api_keys")
            .set((eb) => ({
              replaced_by: replacedBy,
              // An earlier expiry stands: a roll never lengthens a key's life.
              expires_at: eb.case().when(eb.and([eb("expires_at", "is not", null), eb("expires_at", "<", until)])).then(eb.ref("expires_at")).else(until).end()
            }))
            // The same conditions as the read above, checked again by the write: of concurrent rolls, one wins.
            .where("id", "=", id).where("account_id", "=", accountId).where("revoked_at", "is", null).where("replaced_by", "is", null)
            .where((eb) => eb.or([eb("expires_at", "is", null), eb("expires_at", ">", now)]))
            .returningAll()
        )
        if (Option.isSome(rolled)) return { _tag: "rolled", key: toRecord(rolled.value), previousExpiresAt: before.value.expires_at } as const
        // Refused by the write: rolled meanwhile (or revoked, or expired) by another request.
        const after = Option.map(yield* conn.first(own), toRecord)
        return Option.isSome(after) && isActiveKey(after.value, now) && after.value.replaced_by !== null
          ? { _tag: "already_rolled", key: after.value } as const
          : { _tag: "not_found" } as const
      })),
    touch: (id, at, staleBefore) => touch.affected({ id, at, staleBefore }).pipe(Effect.map((count) => count > 0))
  })
}
