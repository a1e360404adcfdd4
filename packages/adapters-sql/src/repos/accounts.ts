import { type Account, AccountsRepo, type StorageError } from "@mzk/core"
import { Effect, Option } from "effect"
import type { SqlConnection } from "../connection.js"

export const sqlAccounts = (conn: SqlConnection) =>
  AccountsRepo.of({
    insert: (account) => conn.execute((db) => db.insertInto("accounts").values(account)).pipe(Effect.asVoid),
    get: (id) =>
      conn.first((db) => db.selectFrom("accounts").selectAll().where("id", "=", id)) as Effect.Effect<Option.Option<Account>, StorageError>
  })
