import type { RowLocking, SqlConnection } from "@mzk/adapters-sql"
import { Effect } from "effect"

/** Other writers of the rows read wait until this transaction ends. */
export const forUpdate: RowLocking = (query) => query.forUpdate()

/** Writers of the rows read wait until this transaction ends; other sharers do not. */
export const forShare: RowLocking = (query) => query.forShare()

/** The rows read are this transaction's; rows another transaction holds are passed over. */
export const forUpdateSkipLocked: RowLocking = (query) => query.forUpdate().skipLocked()

/** Holds the account rows, in id order (so two holders never wait on each other in a cycle), until the transaction ends. */
export const lockAccounts = (conn: SqlConnection, accountIds: ReadonlyArray<string>) =>
  Effect.asVoid(conn.execute((db) => db.selectFrom("accounts").select("id").where("id", "in", accountIds).orderBy("id").forUpdate()))
