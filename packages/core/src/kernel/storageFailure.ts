import { Cause, Effect, Option, Predicate } from "effect"
import type { StorageError } from "./errors.js"

export const isStorageError = (value: unknown): value is StorageError => Predicate.isTagged(value, "StorageError")

/**
 * The database's (or the system's) own words for a failure: the driver error's text and code
 * (`SQLITE_IOERR_WRITE`, a Postgres SQLSTATE, `EPERM`). Only its message and code: never a query,
 * its parameters or a Postgres `detail`, which can quote stored values.
 */
const databaseError = (cause: unknown): { database_error?: string; database_code?: string } => {
  if (typeof cause !== "object" || cause === null) return cause === undefined ? {} : { database_error: String(cause) }
  const code = "code" in cause && (typeof cause.code === "string" || typeof cause.code === "number") ? String(cause.code) : undefined
  // An AggregateError (a connection refused on every address) has no message of its own.
  const message = cause instanceof Error && cause.message !== ""
    ? cause.message
    : cause instanceof AggregateError && cause.errors[0] instanceof Error
    ? cause.errors[0].message
    : undefined
  return { ...(message === undefined ? {} : { database_error: message }), ...(code === undefined ? {} : { database_code: code }) }
}

/**
 * One error line for one storage failure, structured like mzk's other lines (`event:
 * "storage.failure"`): `reason`, mzk's sentence for it (the storage error's message: what
 * readiness shows too), and `database_error` / `database_code`, the database's own. None of it
 * reaches an HTTP response, whose 503 says only that storage is unavailable.
 */
export const logStorageFailure = (message: string, error: StorageError, annotations: Record<string, unknown> = {}): Effect.Effect<void> =>
  Effect.annotateLogs(Effect.logError(message), { event: "storage.failure", reason: error.message, ...databaseError(error.cause), ...annotations })

/**
 * A failure of work nobody waits on (a loop, a settle after the answer): a storage failure as
 * `logStorageFailure` logs it, anything else with its cause at `level` (default error).
 */
export const logFailure = (
  message: string,
  cause: Cause.Cause<unknown>,
  options: { readonly level?: "Error" | "Warning"; readonly annotations?: Record<string, unknown> } = {}
): Effect.Effect<void> => {
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure) && isStorageError(failure.value)) return logStorageFailure(message, failure.value, options.annotations)
  const logged = options.level === "Warning" ? Effect.logWarning(message, cause) : Effect.logError(message, cause)
  return options.annotations === undefined ? logged : Effect.annotateLogs(logged, options.annotations)
}
