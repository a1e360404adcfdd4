import { PostgresStore } from "@mzk/adapters-postgres"
import { SqliteStore } from "@mzk/adapters-sqlite"
import type { Storage, StorageError } from "@mzk/core"
import type { Layer } from "effect"
import type { DatabaseTarget } from "./databaseTarget.js"

export { DEFAULT_DATABASE, type DatabaseTarget, parseDatabaseUrl, redactUrl } from "./databaseTarget.js"

export const storageLayer = (target: DatabaseTarget, options: { readonly migrate?: boolean } = {}): Layer.Layer<Storage, StorageError> =>
  target.kind === "sqlite"
    ? SqliteStore({ filename: target.filename, migrate: options.migrate ?? true })
    : PostgresStore({ connectionString: target.url, migrate: options.migrate ?? true })
