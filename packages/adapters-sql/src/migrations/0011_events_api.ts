import { type Kysely, type Migration } from "kysely"

export const migration = (): Migration => ({
  up: async (db: Kysely<unknown>) => {
    // What queued a delivery's attempts; every existing one came from its event's schedule.
    for (const table of ["deliveries", "delivery_attempts"]) {
      await db.schema.alterTable(table).addColumn("trigger", "text", (c) => c.notNull().defaultTo("scheduled")).execute()
    }
    // GET /events: an account's events newest first, by type, and by creation time.
    await db.schema.createIndex("events_by_account_type").on("events").columns(["account_id", "type", "id"]).execute()
    await db.schema.createIndex("events_by_account_created").on("events").columns(["account_id", "created_at"]).execute()
    // The retention sweep's scan, oldest first over every account.
    await db.schema.createIndex("events_by_created").on("events").columns(["created_at", "id"]).execute()
    // The sweep deletes the attempts of the deliveries it deletes.
    await db.schema.createIndex("delivery_attempts_by_event").on("delivery_attempts").columns(["event_id", "delivery_id"]).execute()
    // A recovery's batches: one webhook's failed and cancelled deliveries in id order.
    await db.schema.createIndex("deliveries_by_webhook_status_id").on("deliveries").columns(["webhook_id", "status", "id"]).execute()

    await db.schema.createTable("webhook_recoveries")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("account_id", "text", (c) => c.notNull())
      .addColumn("webhook_id", "text", (c) => c.notNull())
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("since", "text", (c) => c.notNull())
      .addColumn("until", "text", (c) => c.notNull())
      .addColumn("requeued", "integer", (c) => c.notNull())
      .addColumn("cursor", "text")
      .addColumn("lease_expires_at", "text")
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .addColumn("completed_at", "text")
      .execute()
    await db.schema.createIndex("webhook_recoveries_by_webhook").on("webhook_recoveries").columns(["account_id", "webhook_id", "id"]).execute()
    // The claim's scan: running recoveries, least recently advanced first.
    await db.schema.createIndex("webhook_recoveries_work").on("webhook_recoveries").columns(["status", "updated_at", "id"]).execute()
    // Retention: recoveries that ended before the window.
    await db.schema.createIndex("webhook_recoveries_ended").on("webhook_recoveries").columns(["completed_at"]).execute()
  }
})
