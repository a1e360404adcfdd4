import { migrate, type SqlConnection, sqlStorage } from "@mzk/adapters-sql"
import { openSqlite } from "@mzk/adapters-sqlite"
import type { Storage } from "@mzk/core"
import { type Context, Effect, Layer, Scope } from "effect"

// The real SQL of the embedded default, on a database that lives in memory: one implementation
// of the storage rules (leases, claims, caps, conditional updates) for production and tests
// alike, where a second one written for tests only had to be kept equal by the conformance suite.
const openInMemory: Effect.Effect<SqliteMemoryDatabase, never, Scope.Scope> = Effect.orDie(Effect.gen(function*() {
  const connection = yield* openSqlite({ filename: ":memory:" })
  yield* migrate(connection)
  return { store: sqlStorage(connection), connection }
}))

/** A store on SQLite in memory and its connection, for tests that write rows no port would. */
export interface SqliteMemoryDatabase {
  readonly store: Context.Context<Storage>
  /** `@mzk/adapters-sql`'s connection: `connection.affected((db) => db.updateTable(…)…)` and the like. */
  readonly connection: SqlConnection
}

/**
 * A fresh, empty store per build of the layer: every storage port on SQLite in memory, migrated,
 * closed with the layer's scope. One connection, one writer at a time, as in the embedded server.
 */
export const SqliteMemoryStore: Layer.Layer<Storage> = Layer.scopedContext(Effect.map(openInMemory, (database) => database.store))

/**
 * A fresh store with its connection, as values, for tests that share one store between several
 * layers (two "processes" over one database), wrap some of its ports, or rewrite its rows as a
 * crashed process or a tampered database leaves them. It needs no scope: the connection is closed
 * when nothing holds the store any more.
 */
export const makeSqliteMemoryDatabase: Effect.Effect<SqliteMemoryDatabase> = Effect.flatMap(
  Scope.make(),
  // Never closed: closing it would close the database under a store the caller still holds.
  // better-sqlite3 frees an unreachable in-memory database with its connection.
  (scope) => Scope.extend(openInMemory, scope)
)

/** `makeSqliteMemoryDatabase`'s store alone. */
export const makeSqliteMemoryStore: Effect.Effect<Context.Context<Storage>> = Effect.map(makeSqliteMemoryDatabase, (database) => database.store)
