import type { MetadataSql } from "@mzk/adapters-sql"
import { sql } from "kysely"

/**
 * SQLite reads the JSON text with its JSON functions: a filter is one `json_extract` per pair, on
 * the account's rows the list already narrows to by its index (no index serves arbitrary keys; an
 * account's proofs are scanned once per page); an update is a JSON merge patch (`json_patch`,
 * RFC 7396: null deletes a key). Keys are quoted into the path; their characters (letters, digits,
 * `_ - . :`) need no escaping inside the quotes.
 */
export const sqliteMetadata: MetadataSql = {
  matches: (filter) => {
    const pairs = Object.entries(filter).map(([key, value]) => sql<boolean>`json_extract(metadata, ${`$."${key}"`}) = ${value}`)
    return pairs.length === 0 ? sql<boolean>`1 = 1` : sql<boolean>`(${sql.join(pairs, sql` and `)})`
  },
  merged: (patch) => sql<string>`json_patch(metadata, ${JSON.stringify(patch)})`,
  index: async () => {}
}
