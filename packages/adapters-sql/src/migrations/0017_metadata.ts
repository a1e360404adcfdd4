import { type Kysely, type Migration, sql } from "kysely"
import type { SqlDialect } from "../connection.js"

/** The records that carry an application's metadata (a batch's is copied onto its proofs). */
const TABLES = ["proofs", "api_keys", "webhooks", "circuits"] as const

// Metadata: JSON text, `{}` for every existing row. Only proofs are listed by it, so only they get
// the dialect's index for the filter (where the database has one that serves it; see each dialect's `metadata`).
export const migration = (dialect: SqlDialect): Migration => ({
  up: async (db: Kysely<unknown>) => {
    for (const table of TABLES) {
      await db.schema.alterTable(table).addColumn("metadata", "text", (c) => c.notNull().defaultTo(sql`'{}'`)).execute()
    }
    await dialect.metadata.index(db, "proofs")
  }
})
