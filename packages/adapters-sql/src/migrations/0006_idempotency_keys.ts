import { type Kysely, type Migration } from "kysely"

export const migration = (): Migration => ({
  up: async (db: Kysely<unknown>) => {
    await db.schema.createTable("idempotency_keys")
      .addColumn("account_id", "text", (c) => c.notNull())
      .addColumn("key", "text", (c) => c.notNull())
      .addColumn("fingerprint", "text", (c) => c.notNull())
      .addColumn("request_id", "text", (c) => c.notNull())
      // Null while the request is in flight.
      .addColumn("response_status", "integer")
      .addColumn("response_headers", "text")
      .addColumn("response_body", "text")
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("expires_at", "text", (c) => c.notNull())
      .addColumn("locked_until", "text")
      // The claim's conflict target: one record per account and key.
      .addPrimaryKeyConstraint("idempotency_keys_pk", ["account_id", "key"])
      .execute()
    await db.schema.createIndex("idempotency_keys_expiry").on("idempotency_keys").columns(["expires_at"]).execute()
  }
})
