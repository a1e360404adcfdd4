import { makeSqlConnection, migrate, type SqlConnection, sqlStorage } from "@mzk/adapters-sql"
import type { Database } from "@mzk/adapters-sql"
import { type Storage, StorageError } from "@mzk/core"
import { Effect, Layer, type Scope } from "effect"
import { Kysely } from "kysely"
import { mkdirSync } from "node:fs"
import { dirname } from "node:path"
import { DatabaseFile } from "./databaseFile.js"
import { loadBetterSqlite } from "./driverModule.js"
import { BetterSqliteDialect } from "./kyselyDialect.js"
import { sqliteSqlDialect } from "./sqliteDialect.js"

export interface SqliteOptions {
  /** A file path, or `:memory:` for a database that lives as long as the layer. */
  readonly filename: string
  /** How long a write waits for another process's lock before failing (default 5 s). */
  readonly busyTimeoutMs?: number
  /**
   * `NORMAL` (default) survives a crash of the process, which is what WAL guarantees; `FULL` also
   * survives power loss, at one fsync per commit.
   */
  readonly synchronous?: "NORMAL" | "FULL"
  /** Apply pending migrations when the layer starts (default true). */
  readonly migrate?: boolean
}

/**
 * Opens the database: WAL so readers never wait for the writer, a busy timeout instead of
 * immediate SQLITE_BUSY errors, foreign keys on. better-sqlite3 is one synchronous connection,
 * and Kysely hands it to one query or transaction at a time: one writer, as SQLite wants.
 */
export const openSqlite = (options: SqliteOptions): Effect.Effect<SqlConnection, StorageError, Scope.Scope> =>
  Effect.flatMap(loadBetterSqlite, (SqliteDatabase) => Effect.acquireRelease(
    Effect.try({
      try: () => {
        if (options.filename !== ":memory:") mkdirSync(dirname(options.filename), { recursive: true })
        const database = new SqliteDatabase(options.filename)
        database.pragma("journal_mode = WAL")
        database.pragma(`busy_timeout = ${Math.trunc(options.busyTimeoutMs ?? 5_000)}`)
        database.pragma(`synchronous = ${options.synchronous ?? "NORMAL"}`)
        database.pragma("foreign_keys = ON")
        // `:memory:` and "" (a private temporary file) have no path to check.
        const dialect = new BetterSqliteDialect(database, database.memory || options.filename === "" ? undefined : new DatabaseFile(options.filename))
        return makeSqlConnection(new Kysely<Database>({ dialect }), sqliteSqlDialect, dialect.syncExecutor())
      },
      catch: (cause) => new StorageError({ message: `Cannot open the SQLite database ${options.filename}`, cause })
    }),
    (conn) => Effect.promise(() => conn.db.destroy())
  ))

/** Every storage port on one SQLite database: the embedded default. */
export const SqliteStore = (options: SqliteOptions): Layer.Layer<Storage, StorageError> =>
  Layer.scopedContext(Effect.gen(function*() {
    const conn = yield* openSqlite(options)
    if (options.migrate ?? true) yield* migrate(conn)
    return sqlStorage(conn)
  }))
