import { type Kysely, type MigrationProvider, Migrator, sql } from "kysely"
import { Effect } from "effect"
import { StorageError } from "@mzk/core"
import type { SqlConnection } from "./connection.js"
import { migrationsFor } from "./migrations/index.js"

export { MIGRATIONS } from "./migrations/index.js"

/**
 * Migrations live in code, one file each under `migrations/`, in order, and never change once
 * released: a new schema change is a new file. Kysely's migrator records what ran and takes a lock,
 * so `migrate` is idempotent and safe when several processes start at once. Where a column type is
 * named differently, the dialect names it.
 */
const migratorOf = (conn: SqlConnection) =>
  new Migrator({ db: conn.db as Kysely<unknown>, provider: { getMigrations: async () => migrationsFor(conn.dialect) } satisfies MigrationProvider })

export interface MigrationReport {
  /** Names of the migrations this call applied; empty when the schema was already current. */
  readonly applied: ReadonlyArray<string>
}

/**
 * Applies the pending migrations over the connection's root handle, in its dialect's column types:
 * all of them, or those up to and including `upTo` (for tests of a migration over older data).
 */
export const migrate = (conn: SqlConnection, upTo?: string): Effect.Effect<MigrationReport, StorageError> =>
  Effect.gen(function*() {
    const migrator = migratorOf(conn)
    const { error, results } = yield* Effect.tryPromise({
      try: () => (upTo === undefined ? migrator.migrateToLatest() : migrator.migrateTo(upTo)),
      catch: (cause) => new StorageError({ message: "Database migration failed", cause })
    })
    if (error !== undefined) return yield* new StorageError({ message: "Database migration failed", cause: error })
    return { applied: (results ?? []).filter((r) => r.status === "Success").map((r) => r.migrationName) }
  })

/**
 * The migrations the database has not applied: one read of Kysely's migration table, also the
 * readiness probe's round trip (Kysely's own `getMigrations` introspects every table first, too
 * much for a probe anyone may call). A database without the table has applied none.
 */
export const pendingMigrations = (conn: SqlConnection): Effect.Effect<ReadonlyArray<string>, StorageError> =>
  Effect.tryPromise({
    try: async () => {
      const known = Object.keys(migrationsFor(conn.dialect))
      try {
        const { rows } = await sql<{ name: string }>`select name from kysely_migration`.execute(conn.db)
        const applied = new Set(rows.map((row) => row.name))
        return known.filter((name) => !applied.has(name))
      } catch (cause) {
        // The table is missing only before the first migration; anything else is the database failing.
        const missing = await sql`select 1`.execute(conn.db).then(() => true, () => false)
        if (missing) return known
        throw cause
      }
    },
    catch: (cause) => conn.storageError(cause, "the database could not be reached")
  })
