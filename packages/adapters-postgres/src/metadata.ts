import type { MetadataSql } from "@mzk/adapters-sql"
import { sql } from "kysely"

/**
 * Postgres reads the JSON text as `jsonb`: a filter is one containment test (`@>`), which the GIN
 * index over the same expression (`jsonb_path_ops`, made for `@>`) answers without reading the
 * rows; an update merges with `||` and drops the keys set to null (the values are flat strings, so
 * `jsonb_strip_nulls` touches nothing else).
 */
export const postgresMetadata: MetadataSql = {
  matches: (filter) => sql<boolean>`(metadata::jsonb) @> ${JSON.stringify(filter)}::jsonb`,
  merged: (patch) => sql<string>`jsonb_strip_nulls(metadata::jsonb || ${JSON.stringify(patch)}::jsonb)::text`,
  index: async (db, table) => {
    await sql`create index ${sql.id(`${table}_metadata`)} on ${sql.table(table)} using gin ((metadata::jsonb) jsonb_path_ops)`.execute(db)
  }
}
