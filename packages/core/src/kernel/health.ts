import { Context, type Effect } from "effect"
import type { StorageError } from "./errors.js"

/** What readiness asks of storage: it answered, its schema is the one this code expects, and it takes a write. */
export interface StorageStatus {
  /** Migrations this code has that the database has not applied (run `mzk migrate`). */
  readonly pendingMigrations: ReadonlyArray<string>
  /**
   * Why a write fails now, when the probe's write failed (a full or read-only disk, a database
   * file replaced under the process, a read-only standby); absent while writes succeed. Not
   * tried while migrations are pending: the schema is not this code's yet.
   */
  readonly writeFailure?: StorageError
}

/**
 * A round trip to storage for readiness probes, a read and a one-row write: fails when the
 * database cannot be reached; a write it cannot take is `writeFailure`.
 */
export class StorageHealth extends Context.Tag("@mzk/core/StorageHealth")<StorageHealth, {
  readonly check: Effect.Effect<StorageStatus, StorageError>
}>() {}
