import { type ApiKeyRecord, KeyLimitReached, KeysRepo } from "@mzk/core"
import { Effect, Option } from "effect"
import type { Selectable } from "kysely"
import type { SqlConnection } from "../connection.js"
import type { ApiKeysTable } from "../schema.js"
import { insertUnderAccountLimit } from "./accountLimit.js"

const toRecord = (row: Selectable<ApiKeysTable>): ApiKeyRecord => ({ ...row, scopes: JSON.parse(row.scopes) }) as ApiKeyRecord

export const sqlKeys = (conn: SqlConnection) => {
  const byHash = conn.statement((db, $: { hash: string }) => db.selectFrom("api_keys").selectAll().where("hash", "=", $.hash))
  const active = conn.statement((db, $: { accountId: string; now: string }) =>
    db.selectFrom("api_keys").selectAll().where("account_id", "=", $.accountId).where("revoked_at", "is", null)
      .where((eb) => eb.or([eb("expires_at", "is", null), eb("expires_at", ">", $.now)])).orderBy("id")
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
        insert: (db) => db.insertInto("api_keys").values({ ...key, scopes: JSON.stringify(key.scopes) }),
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
    expire: (accountId, id, at, now) =>
      conn.first((db) =>
        db.updateTable("api_keys")
          // An earlier expiry stands: a roll never lengthens a key's life.
          .set((eb) => ({
            expires_at: eb.case().when(eb.and([eb("expires_at", "is not", null), eb("expires_at", "<", at)])).then(eb.ref("expires_at")).else(at).end()
          }))
          .where("id", "=", id).where("account_id", "=", accountId).where("revoked_at", "is", null)
          .where((eb) => eb.or([eb("expires_at", "is", null), eb("expires_at", ">", now)]))
          .returningAll()
      ).pipe(Effect.map(Option.map(toRecord))),
    touch: (id, at, staleBefore) => touch.affected({ id, at, staleBefore }).pipe(Effect.map((count) => count > 0))
  })
}
