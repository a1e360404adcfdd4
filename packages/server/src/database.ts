import type { Storage, StorageError } from "@mzk/core"
import { Effect, Layer } from "effect"
import type { DatabaseTarget } from "./databaseTarget.js"

export { DEFAULT_DATABASE, type DatabaseTarget, parseDatabaseUrl, redactUrl } from "./databaseTarget.js"

/**
 * The storage of `target`. Only its own dialect's adapter and driver are read (when the layer is
 * built): a SQLite process never loads pg, nor a Postgres one better-sqlite3.
 */
export const storageLayer = (target: DatabaseTarget, options: { readonly migrate?: boolean } = {}): Layer.Layer<Storage, StorageError> => {
  const migrate = options.migrate ?? true
  return Layer.unwrapEffect(
    target.kind === "sqlite"
      ? Effect.promise(() => import("@mzk/adapters-sqlite")).pipe(
        Effect.map(({ SqliteStore }) => SqliteStore({ filename: target.filename, migrate }))
      )
      : Effect.promise(() => import("@mzk/adapters-postgres")).pipe(
        Effect.map(({ PostgresStore }) => PostgresStore({ connectionString: target.url, migrate }))
      )
  )
}
