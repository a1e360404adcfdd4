import { type EventRecord, EventsRepo } from "@mzk/core"
import { Effect, Option } from "effect"
import { type ExpressionBuilder, type Selectable, sql } from "kysely"
import type { SqlConnection } from "../connection.js"
import type { Database, EventsTable } from "../schema.js"
import { page } from "./paging.js"

const toRecord = (row: Selectable<EventsTable>): EventRecord => ({ ...row, data: JSON.parse(row.data) }) as EventRecord

/** The event has a delivery (a pending one, with `status`) left. */
const hasDelivery = (status?: "pending") => (eb: ExpressionBuilder<Database, "events">) =>
  eb.exists(
    eb.selectFrom("deliveries").select(sql`1`.as("one")).whereRef("deliveries.event_id", "=", "events.id")
      .$if(status !== undefined, (q) => q.where("deliveries.status", "=", status!))
  )

export const sqlEvents = (conn: SqlConnection) =>
  EventsRepo.of({
    insert: (event) =>
      conn.execute((db) => db.insertInto("events").values({ ...event, data: JSON.stringify(event.data) })).pipe(Effect.asVoid),
    get: (id) =>
      conn.first((db) => db.selectFrom("events").selectAll().where("id", "=", id)).pipe(Effect.map(Option.map(toRecord))),
    list: (accountId, request, filter = {}) =>
      page(conn, request, (db) =>
        db.selectFrom("events").where("account_id", "=", accountId)
          .$if(filter.types !== undefined, (q) => q.where("type", "in", [...filter.types!]))
          .$if(filter.createdGte !== undefined, (q) => q.where("created_at", ">=", filter.createdGte!))
          .$if(filter.createdLt !== undefined, (q) => q.where("created_at", "<", filter.createdLt!)), toRecord),
    /**
     * The oldest expired events without a pending delivery, held (passed over when another sweeper
     * holds them); then their settled deliveries, whose rows stay held until the end, so a retry
     * that would make one pending waits and then finds it gone; then the attempts of deliveries
     * no longer there; then the events no delivery is left of. A delivery a retry made pending
     * before it was held survives, and so do its attempts and its event.
     */
    deleteExpired: (before, limit) =>
      conn.transaction(Effect.gen(function*() {
        const expired = yield* conn.rows((db) =>
          db.selectFrom("events").select("id").where("created_at", "<", before).where((eb) => eb.not(hasDelivery("pending")(eb)))
            .orderBy("created_at").orderBy("id").limit(limit).$call(conn.dialect.takeRows)
        )
        if (expired.length === 0) return 0
        const ids = expired.map((row) => row.id)
        yield* conn.execute((db) => db.deleteFrom("deliveries").where("event_id", "in", ids).where("status", "<>", "pending"))
        yield* conn.execute((db) =>
          db.deleteFrom("delivery_attempts").where("event_id", "in", ids)
            .where((eb) => eb.not(eb.exists(eb.selectFrom("deliveries").select(sql`1`.as("one")).whereRef("deliveries.id", "=", "delivery_attempts.delivery_id"))))
        )
        return yield* conn.affected((db) => db.deleteFrom("events").where("id", "in", ids).where((eb) => eb.not(hasDelivery()(eb))))
      }))
  })
