import { type Database, makeSqlConnection, migrate, type SqlConnection, sqlStorage } from "@mzk/adapters-sql"
import { type Storage, StorageError } from "@mzk/core"
import { Effect, Layer, type Scope } from "effect"
import { Kysely, PostgresDialect } from "kysely"
import pg from "pg"
import { pgConnectionString } from "./connectionString.js"
import { postgresSqlDialect } from "./postgresDialect.js"

export interface PostgresOptions {
  /** `postgres://user:password@host:5432/database` */
  readonly connectionString: string
  /** Connections in this process's pool (default 10). */
  readonly poolSize?: number
  /** Apply pending migrations when the layer starts (default true; safe with many processes). */
  readonly migrate?: boolean
}

/** A pg pool behind Kysely. Checks the connection at start so a wrong URL fails at once. */
export const openPostgres = (options: PostgresOptions): Effect.Effect<SqlConnection, StorageError, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        const pool = new pg.Pool({ connectionString: pgConnectionString(options.connectionString), max: options.poolSize ?? 10 })
        // A connection that the server drops (restart, failover, pg_terminate_backend) must not crash
        // the process. Idle ones are reported on the pool, which discards them; a checked-out one
        // emits "error" on its client, where pg-pool listens only while it is idle: its query fails
        // with the cause (a StorageError, then 503) and the pool discards it on release.
        pool.on("error", () => undefined)
        pool.on("connect", (client) => client.on("error", () => undefined))
        try {
          const client = await pool.connect()
          client.release()
        } catch (error) {
          await pool.end()
          throw error
        }
        return makeSqlConnection(new Kysely<Database>({ dialect: new PostgresDialect({ pool }) }), postgresSqlDialect)
      },
      catch: (cause) => new StorageError({ message: "Cannot connect to PostgreSQL", cause })
    }),
    (conn) => Effect.promise(() => conn.db.destroy())
  )

/** Every storage port on one PostgreSQL database, shared safely by any number of processes. */
export const PostgresStore = (options: PostgresOptions): Layer.Layer<Storage, StorageError> =>
  Layer.scopedContext(Effect.gen(function*() {
    const conn = yield* openPostgres(options)
    if (options.migrate ?? true) yield* migrate(conn)
    return sqlStorage(conn)
  }))

export { PostgresWakeups } from "./wakeups.js"
