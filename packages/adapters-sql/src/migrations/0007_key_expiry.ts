import { type Kysely, type Migration } from "kysely"

// Null for every existing key: none expires until told to.
export const migration = (): Migration => ({
  up: async (db: Kysely<unknown>) => {
    await db.schema.alterTable("api_keys").addColumn("expires_at", "text").execute()
  }
})
