import type { Page, PageOf } from "@mzk/core"
import { Effect } from "effect"
import type { SelectQueryBuilder } from "kysely"
import type { Executor, SqlConnection } from "../connection.js"
import type { Database } from "../schema.js"

/**
 * Cursor paging shared by every list: rows after `startingAfter` in id order (ascending, or
 * descending for newest-first lists), one row more than asked to learn `has_more`, and the total of
 * the unfiltered-by-cursor query.
 */
export const page = <T extends keyof Database, Row, A>(
  conn: SqlConnection,
  request: Page,
  from: (db: Executor) => SelectQueryBuilder<Database, T, object>,
  toRecord: (row: Row) => A
): Effect.Effect<PageOf<A>, import("@mzk/core").StorageError> =>
  Effect.gen(function*() {
    const rows = yield* conn.rows((db) => {
      let q = from(db).selectAll()
      const newestFirst = request.order === "desc"
      if (request.startingAfter !== undefined) q = q.where("id" as never, newestFirst ? "<" : ">", request.startingAfter as never)
      return q.orderBy("id" as never, newestFirst ? "desc" : "asc").limit(request.limit + 1)
    })
    const [counted] = yield* conn.rows((db) => from(db).select((eb) => eb.fn.countAll<number | string>().as("total")))
    return {
      items: (rows as Array<Row>).slice(0, request.limit).map(toRecord),
      total: Number(counted?.total ?? 0),
      has_more: rows.length > request.limit
    }
  })
