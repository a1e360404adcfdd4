import { type Kysely, type Migration } from "kysely"

// The secret a rotation replaced and when it stops signing; null for every existing webhook,
// which has never been rotated.
export const migration = (): Migration => ({
  up: async (db: Kysely<unknown>) => {
    await db.schema.alterTable("webhooks").addColumn("previous_secret", "text").execute()
    await db.schema.alterTable("webhooks").addColumn("previous_secret_expires_at", "text").execute()
  }
})
