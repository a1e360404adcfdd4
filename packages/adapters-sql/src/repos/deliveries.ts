import { DeliveriesRepo, type DeliveryRecord } from "@mzk/core"
import { Effect } from "effect"
import type { SqlConnection } from "../connection.js"

export const sqlDeliveries = (conn: SqlConnection) =>
  DeliveriesRepo.of({
    insertMany: (rows) =>
      rows.length === 0 ? Effect.void : conn.query((db) => db.insertInto("deliveries").values([...rows]).execute()).pipe(Effect.asVoid),
    listByEvent: (eventId) =>
      conn.query((db) => db.selectFrom("deliveries").selectAll().where("event_id", "=", eventId).orderBy("id").execute())
        .pipe(Effect.map((rows) => rows as Array<DeliveryRecord>))
  })
