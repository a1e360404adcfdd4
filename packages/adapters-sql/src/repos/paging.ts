import type { Page, PageOf } from "@mzk/core"
import { Effect } from "effect"
import type { SelectQueryBuilder } from "kysely"
import type { Executor, SqlConnection } from "../connection.js"
import type { Database } from "../schema.js"

/**
 * Cursor paging shared by every list, newest first (descending id): the rows older than
 * `startingAfter`, or the `limit` rows just newer than `endingBefore` (read ascending from the
 * cursor, so the page touches it, then turned newest first); one row more than asked to learn
 * `has_more` in the direction paged, and the total of the query without its cursor.
 */
export const page = <T extends keyof Database, Row, A>(
  conn: SqlConnection,
  request: Page,
  from: (db: Executor) => SelectQueryBuilder<Database, T, object>,
  toRecord: (row: Row) => A
): Effect.Effect<PageOf<A>, import("@mzk/core").StorageError> =>
  Effect.gen(function*() {
    const backwards = request.endingBefore !== undefined
    const rows = yield* conn.rows((db) => {
      let q = from(db).selectAll()
      if (request.startingAfter !== undefined) q = q.where("id" as never, "<", request.startingAfter as never)
      if (request.endingBefore !== undefined) q = q.where("id" as never, ">", request.endingBefore as never)
      return q.orderBy("id" as never, backwards ? "asc" : "desc").limit(request.limit + 1)
    })
    const [counted] = yield* conn.rows((db) => from(db).select((eb) => eb.fn.countAll<number | string>().as("total")))
    const kept = (rows as Array<Row>).slice(0, request.limit)
    if (backwards) kept.reverse()
    return {
      items: kept.map(toRecord),
      total: Number(counted?.total ?? 0),
      has_more: rows.length > request.limit
    }
  })
