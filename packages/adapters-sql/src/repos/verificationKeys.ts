import { type VerificationKeyRecord, VerificationKeysRepo } from "@mzk/core"
import { Effect, Option } from "effect"
import type { Selectable } from "kysely"
import type { SqlConnection } from "../connection.js"
import type { VerificationKeysTable } from "../schema.js"
import { page } from "./paging.js"

const toRecord = (row: Selectable<VerificationKeysTable>): VerificationKeyRecord =>
  ({ ...row, n_public: Number(row.n_public), verification_key: JSON.parse(row.verification_key) }) as VerificationKeyRecord

export const sqlVerificationKeys = (conn: SqlConnection) =>
  VerificationKeysRepo.of({
    insert: (record) =>
      conn.execute((db) => db.insertInto("verification_keys").values({ ...record, verification_key: JSON.stringify(record.verification_key) })),
    get: (accountId, id) =>
      conn.first((db) => db.selectFrom("verification_keys").selectAll().where("id", "=", id).where("account_id", "=", accountId))
        .pipe(Effect.map(Option.map(toRecord))),
    list: (accountId, request) =>
      page(conn, request, (db) => db.selectFrom("verification_keys").where("account_id", "=", accountId), toRecord),
    remove: (accountId, id) =>
      conn.first((db) => db.deleteFrom("verification_keys").where("id", "=", id).where("account_id", "=", accountId).returningAll())
        .pipe(Effect.map(Option.map(toRecord)))
  })
