import { DatabaseFileFault, describeFileFault } from "./databaseFile.js"

/** SQLite's result codes (and their extended forms, `SQLITE_IOERR_WRITE`…) an operator can act on. */
const REASONS: ReadonlyArray<readonly [code: string, reason: string]> = [
  ["SQLITE_FULL", "the disk is full"],
  ["SQLITE_READONLY", "the database is read-only"],
  ["SQLITE_IOERR", "an I/O error on the database's disk"],
  ["SQLITE_CANTOPEN", "the database file cannot be opened"],
  ["SQLITE_CORRUPT", "the database file is corrupt"],
  ["SQLITE_NOTADB", "the file is not an SQLite database"],
  ["SQLITE_BUSY", "another process held the database's write lock past the busy timeout"]
]

/** `SqlDialect.describeFailure` for better-sqlite3's errors and mzk's own refusals of a write (`DatabaseFileFault`). */
export const describeSqliteFailure = (cause: unknown): string | undefined => {
  if (cause instanceof DatabaseFileFault) return describeFileFault(cause)
  const code = typeof cause === "object" && cause !== null && "code" in cause && typeof cause.code === "string" ? cause.code : undefined
  if (code === undefined) return undefined
  const known = REASONS.find(([prefix]) => code === prefix || code.startsWith(`${prefix}_`))
  return known === undefined ? undefined : `${known[1]} (${code})`
}
