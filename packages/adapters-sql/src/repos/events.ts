import { type EventRecord, EventsRepo } from "@mzk/core"
import { Effect, Option } from "effect"
import type { Selectable } from "kysely"
import type { SqlConnection } from "../connection.js"
import type { EventsTable } from "../schema.js"
import { page } from "./paging.js"

const toRecord = (row: Selectable<EventsTable>): EventRecord => ({ ...row, data: JSON.parse(row.data) }) as EventRecord

export const sqlEvents = (conn: SqlConnection) =>
  EventsRepo.of({
    insert: (event) =>
      conn.execute((db) => db.insertInto("events").values({ ...event, data: JSON.stringify(event.data) })).pipe(Effect.asVoid),
    get: (id) =>
      conn.first((db) => db.selectFrom("events").selectAll().where("id", "=", id)).pipe(Effect.map(Option.map(toRecord))),
    list: (accountId, request) => page(conn, request, (db) => db.selectFrom("events").where("account_id", "=", accountId), toRecord)
  })
