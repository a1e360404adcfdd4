import { type Kysely, type Migration } from "kysely"

export const migration = (): Migration => ({
  up: async (db: Kysely<unknown>) => {
    for (const column of ["lease_expires_at", "first_failed_at", "last_attempt_at"]) {
      await db.schema.alterTable("deliveries").addColumn(column, "text").execute()
    }
    // The claim scan (due pending rows by time) and cancelling a webhook's pending rows.
    await db.schema.createIndex("deliveries_due").on("deliveries").columns(["status", "next_attempt_at", "id"]).execute()
    await db.schema.createIndex("deliveries_by_webhook").on("deliveries").columns(["webhook_id", "status"]).execute()
    await db.schema.createTable("delivery_attempts")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("account_id", "text", (c) => c.notNull())
      .addColumn("delivery_id", "text", (c) => c.notNull())
      .addColumn("webhook_id", "text", (c) => c.notNull())
      .addColumn("event_id", "text", (c) => c.notNull())
      .addColumn("event_type", "text", (c) => c.notNull())
      .addColumn("attempt", "integer", (c) => c.notNull())
      .addColumn("attempted_at", "text", (c) => c.notNull())
      .addColumn("outcome", "text", (c) => c.notNull())
      .addColumn("status_code", "integer")
      .addColumn("error", "text")
      .addColumn("latency_ms", "integer", (c) => c.notNull())
      .addColumn("response_body", "text")
      .execute()
    await db.schema.createIndex("delivery_attempts_by_webhook").on("delivery_attempts")
      .columns(["account_id", "webhook_id", "id"]).execute()
  }
})
