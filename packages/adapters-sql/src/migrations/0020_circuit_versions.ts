import { type Kysely, type Migration, sql } from "kysely"

export const migration = (): Migration => ({
  up: async (db: Kysely<unknown>) => {
    // A name has versions. Rows of one account and name are numbered in id (upload) order, so a
    // name uploaded once is version 1, and one removed and uploaded again keeps every number apart
    // (its live row the highest): proofs name versions, so a number is never reused.
    await db.schema.alterTable("circuits").addColumn("version", "integer", (c) => c.notNull().defaultTo(1)).execute()
    await sql`UPDATE circuits SET version = (SELECT count(*) FROM circuits AS earlier
      WHERE earlier.account_id = circuits.account_id AND earlier.name = circuits.name AND earlier.id <= circuits.id)`.execute(db)
    // A live name is no longer unique (its versions are all live); a version is, removed ones included.
    await db.schema.dropIndex("circuits_live_name").execute()
    await db.schema.createIndex("circuits_version").on("circuits").columns(["account_id", "name", "version"]).unique().execute()

    // Which version a proof was made with, from its circuit's row; built-in circuits have one, 1.
    await db.schema.alterTable("proofs").addColumn("circuit_version", "integer", (c) => c.notNull().defaultTo(1)).execute()
    await sql`UPDATE proofs SET circuit_version = COALESCE((SELECT version FROM circuits WHERE circuits.id = proofs.circuit_id), 1)
      WHERE circuit_id IS NOT NULL`.execute(db)
  }
})
