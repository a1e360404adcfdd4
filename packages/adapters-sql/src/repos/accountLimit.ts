import type { StorageError } from "@mzk/core"
import { Effect } from "effect"
import type { Compilable } from "kysely"
import type { Executor, SqlConnection } from "../connection.js"

/**
 * Inserts a row only while the account holds fewer than `max` of the counted rows, atomically:
 * holding the account (`SqlDialect.lockAccounts`) serialises concurrent inserts of one account, so
 * the count and the insert cannot interleave, across processes too.
 */
export const insertUnderAccountLimit = <E>(conn: SqlConnection, options: {
  readonly accountId: string
  readonly max: number
  readonly count: (db: Executor) => Compilable<{ readonly count: number | string | bigint }>
  readonly insert: (db: Executor) => Compilable<unknown>
  readonly full: () => E
}): Effect.Effect<void, E | StorageError> =>
  conn.transaction(Effect.gen(function*() {
    yield* conn.dialect.lockAccounts(conn, [options.accountId])
    const [counted] = yield* conn.rows(options.count)
    if (Number(counted?.count ?? 0) >= options.max) return yield* Effect.fail(options.full())
    yield* conn.execute(options.insert)
  }))
