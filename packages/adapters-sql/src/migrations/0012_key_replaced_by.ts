import { type Kysely, type Migration } from "kysely"

// The key a roll made to replace this one: a key is rolled once. Null for every existing key,
// rolled or not; one rolled before this column existed may be rolled once more.
export const migration = (): Migration => ({
  up: async (db: Kysely<unknown>) => {
    await db.schema.alterTable("api_keys").addColumn("replaced_by", "text").execute()
  }
})
