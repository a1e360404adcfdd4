import type { StorageError } from "@mzk/core"
import { Effect } from "effect"
import type { Executor, SqlConnection } from "../connection.js"

/**
 * Inserts a row only while the account holds fewer than `max` of the counted rows, atomically.
 * The account row lock serialises concurrent inserts of one account on Postgres, so the count and
 * the insert cannot interleave across processes; SQLite's single writer does the same.
 */
export const insertUnderAccountLimit = <E>(conn: SqlConnection, options: {
  readonly accountId: string
  readonly max: number
  readonly count: (db: Executor) => Promise<{ readonly count: number | string | bigint }>
  readonly insert: (db: Executor) => Promise<unknown>
  readonly full: () => E
}): Effect.Effect<void, E | StorageError> =>
  conn.transaction(Effect.gen(function*() {
    yield* conn.query((db) =>
      db.selectFrom("accounts").select("id").where("id", "=", options.accountId)
        .$if(conn.dialect === "postgres", (q) => q.forUpdate()).execute()
    )
    const { count } = yield* conn.query(options.count)
    if (Number(count) >= options.max) return yield* Effect.fail(options.full())
    yield* conn.query(options.insert)
  }))
