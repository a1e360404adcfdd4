import { type Kysely, type Migration } from "kysely"

export const migration = (): Migration => ({
  up: async (db: Kysely<unknown>) => {
    await db.schema.createTable("proofs")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id"))
      .addColumn("batch_id", "text")
      .addColumn("type", "text", (c) => c.notNull())
      .addColumn("circuit", "text", (c) => c.notNull())
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("inputs", "text")
      .addColumn("public_inputs", "text", (c) => c.notNull())
      .addColumn("proof_blob", "text")
      .addColumn("error", "text")
      .addColumn("duration_ms", "integer")
      .addColumn("attempts", "integer", (c) => c.notNull())
      .addColumn("lease_expires_at", "text")
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("started_at", "text")
      .addColumn("completed_at", "text")
      .addColumn("expires_at", "text")
      .execute()
    // get/list by account (optionally by status), the claim scan in id order, the per-account
    // running count, and the retention sweep by expiry.
    await db.schema.createIndex("proofs_by_account").on("proofs").columns(["account_id", "status", "id"]).execute()
    await db.schema.createIndex("proofs_by_account_id").on("proofs").columns(["account_id", "id"]).execute()
    await db.schema.createIndex("proofs_work").on("proofs").columns(["status", "id"]).execute()
    await db.schema.createIndex("proofs_expiry").on("proofs").columns(["status", "expires_at", "id"]).execute()
  }
})
