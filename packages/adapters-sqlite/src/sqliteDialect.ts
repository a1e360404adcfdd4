import type { SqlDialect } from "@mzk/adapters-sql"
import { Effect } from "effect"
import { scannedDeliveryPick, scannedProofPick } from "./claims.js"
import { describeSqliteFailure } from "./failures.js"
import { sqliteMetadata } from "./metadata.js"

/**
 * SQLite's ways. It has one writer at a time (in a process, one connection taken in turns; between
 * processes, the database's write lock), which serialises every section that other databases guard
 * with row locks: so reads lock nothing, holding accounts is nothing, and claims scan in order.
 * SQLite has no channel to other processes, so announcing work is nothing: they find it when they poll.
 */
export const sqliteSqlDialect: SqlDialect = {
  // SQLite's integers are 64-bit whatever the declared name; `integer` is what the schema has declared since its first release.
  columnTypes: { int64: "integer", bytes: "blob" },
  lockRows: (query) => query,
  shareRows: (query) => query,
  takeRows: (query) => query,
  lockAccounts: () => Effect.void,
  pickDeliveries: scannedDeliveryPick,
  pickProofs: scannedProofPick,
  announce: () => Effect.void,
  describeFailure: describeSqliteFailure,
  metadata: sqliteMetadata
}
