import { type Kysely, type Migration } from "kysely"

export const migration = (): Migration => ({
  up: async (db: Kysely<unknown>) => {
    await db.schema.createTable("audit_log")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("account_id", "text", (c) => c.notNull())
      .addColumn("action", "text", (c) => c.notNull())
      .addColumn("actor_type", "text", (c) => c.notNull())
      .addColumn("actor_id", "text")
      .addColumn("target_type", "text", (c) => c.notNull())
      .addColumn("target_id", "text", (c) => c.notNull())
      .addColumn("target_name", "text")
      .addColumn("request_id", "text")
      .addColumn("ip_address", "text")
      .addColumn("user_agent", "text")
      .addColumn("changes", "text")
      .addColumn("created_at", "text", (c) => c.notNull())
      .execute()
    // The listing (newest first), one resource's history, and retention.
    await db.schema.createIndex("audit_log_by_account").on("audit_log").columns(["account_id", "id"]).execute()
    await db.schema.createIndex("audit_log_by_target").on("audit_log").columns(["account_id", "target_id", "id"]).execute()
    await db.schema.createIndex("audit_log_by_time").on("audit_log").columns(["created_at"]).execute()
  }
})
