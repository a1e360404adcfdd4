import { Context, type Effect } from "effect"
import type { StorageError } from "./errors.js"

/** What readiness asks of storage: it answered, and its schema is the one this code expects. */
export interface StorageStatus {
  /** Migrations this code has that the database has not applied (run `mzk migrate`). */
  readonly pendingMigrations: ReadonlyArray<string>
}

/** A round trip to storage for readiness probes; fails when the database cannot be reached. */
export class StorageHealth extends Context.Tag("@mzk/core/StorageHealth")<StorageHealth, {
  readonly check: Effect.Effect<StorageStatus, StorageError>
}>() {}
