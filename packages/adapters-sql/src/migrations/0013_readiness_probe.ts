import { type Kysely, type Migration } from "kysely"

// One row that readiness rewrites: a write the database must take for the process to be ready.
export const migration = (): Migration => ({
  up: async (db: Kysely<unknown>) => {
    await db.schema.createTable("readiness_probe")
      .addColumn("id", "integer", (c) => c.primaryKey())
      .addColumn("probed_at", "text", (c) => c.notNull())
      .execute()
  }
})
