import { VerificationKeyLimitReached, type VerificationKeyRecord, VerificationKeysRepo } from "@mzk/core"
import { Effect, Option } from "effect"
import type { Selectable } from "kysely"
import type { SqlConnection } from "../connection.js"
import type { VerificationKeysTable } from "../schema.js"
import { insertUnderAccountLimit } from "./accountLimit.js"
import { page } from "./paging.js"

const toRecord = (row: Selectable<VerificationKeysTable>): VerificationKeyRecord =>
  ({ ...row, n_public: Number(row.n_public), verification_key: JSON.parse(row.verification_key) }) as VerificationKeyRecord

export const sqlVerificationKeys = (conn: SqlConnection) =>
  VerificationKeysRepo.of({
    insert: (record, { maxPerAccount }) =>
      insertUnderAccountLimit(conn, {
        accountId: record.account_id,
        max: maxPerAccount,
        count: (db) =>
          db.selectFrom("verification_keys").select((eb) => eb.fn.countAll<number | string>().as("count")).where("account_id", "=", record.account_id),
        insert: (db) => db.insertInto("verification_keys").values({ ...record, verification_key: JSON.stringify(record.verification_key) }),
        full: () =>
          new VerificationKeyLimitReached({ message: `An account may hold at most ${maxPerAccount} verification keys; delete one to register another` })
      }),
    get: (accountId, id) =>
      conn.first((db) => db.selectFrom("verification_keys").selectAll().where("id", "=", id).where("account_id", "=", accountId))
        .pipe(Effect.map(Option.map(toRecord))),
    list: (accountId, request) =>
      page(conn, request, (db) => db.selectFrom("verification_keys").where("account_id", "=", accountId), toRecord),
    remove: (accountId, id) =>
      conn.first((db) => db.deleteFrom("verification_keys").where("id", "=", id).where("account_id", "=", accountId).returningAll())
        .pipe(Effect.map(Option.map(toRecord)))
  })
