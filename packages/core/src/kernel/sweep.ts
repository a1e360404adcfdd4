import { Effect, type Scope } from "effect"
import type { StorageError } from "./errors.js"
import { logFailure } from "./storageFailure.js"
import type { Timestamp } from "./time.js"

/**
 * A retention or expiry sweep as a background fiber of the current scope: one sweep at once, then
 * one every `intervalMs`. A sweep that fails is logged and tried again at the next interval; what
 * it would have removed waits until then, nothing else does.
 */
export const sweepForever = <R>(
  name: string,
  sweep: Effect.Effect<unknown, unknown, R>,
  intervalMs: number
): Effect.Effect<void, never, R | Scope.Scope> =>
  sweep.pipe(
    Effect.catchAllCause((cause) => logFailure(`${name} failed`, cause)),
    Effect.zipRight(Effect.sleep(intervalMs)),
    Effect.forever,
    Effect.forkScoped,
    Effect.asVoid
  )

/**
 * Runs a deletion of at most `limit` rows older than `before` until one comes back short, so no
 * statement runs long; returns how many it deleted in all.
 */
export const deleteInBatches = (
  batch: (before: Timestamp, limit: number) => Effect.Effect<number, StorageError>,
  before: Timestamp,
  limit: number
): Effect.Effect<number, StorageError> =>
  Effect.gen(function*() {
    let total = 0
    for (;;) {
      const deleted = yield* batch(before, limit)
      total += deleted
      if (deleted < limit) return total
    }
  })
