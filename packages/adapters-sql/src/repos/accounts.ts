import { type Account, AccountsRepo } from "@mzk/core"
import { Effect, Option } from "effect"
import type { SqlConnection } from "../connection.js"

export const sqlAccounts = (conn: SqlConnection) =>
  AccountsRepo.of({
    insert: (account) => conn.query((db) => db.insertInto("accounts").values(account).execute()).pipe(Effect.asVoid),
    get: (id) =>
      conn.query((db) => db.selectFrom("accounts").selectAll().where("id", "=", id).executeTakeFirst()).pipe(
        Effect.map((row) => Option.fromNullable(row as Account | undefined))
      )
  })
