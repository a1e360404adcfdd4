import { Clock, Effect, Layer } from "effect"
import type { StorageError } from "../kernel/errors.js"
import { type Timestamp, timestampFromMillis } from "../kernel/time.js"
import { RecoveriesRepo } from "../webhooks/repo.js"
import { EventsConfig } from "./config.js"
import { EventsRepo } from "./repo.js"

/** Runs a deletion of at most `limit` rows until one comes back short; how many it deleted in all. */
const drain = (batch: (before: Timestamp, limit: number) => Effect.Effect<number, StorageError>, before: Timestamp, limit: number) =>
  Effect.gen(function*() {
    let total = 0
    for (;;) {
      const deleted = yield* batch(before, limit)
      total += deleted
      if (deleted < limit) return total
    }
  })

/**
 * Deletes the events older than the retention window, a batch per statement; returns how many.
 * Events whose delivery is still pending stay until it settles (see `EventsRepo.deleteExpired`).
 * Webhook recoveries that ended before the window go too: what they re-queued is gone with it.
 */
export const sweepExpiredEvents = Effect.gen(function*() {
  const config = yield* EventsConfig
  const before = timestampFromMillis((yield* Clock.currentTimeMillis) - config.retentionMs)
  const deleted = yield* drain((yield* EventsRepo).deleteExpired, before, config.sweepBatchSize)
  yield* drain((yield* RecoveriesRepo).deleteEnded, before, config.sweepBatchSize)
  return deleted
})

/** The event retention sweeper as a scoped background loop: a sweep at start, then every `sweepIntervalMs`. */
export const EventRetentionSweeper = Layer.scopedDiscard(
  Effect.gen(function*() {
    const config = yield* EventsConfig
    yield* sweepExpiredEvents.pipe(
      Effect.tap((deleted) => (deleted > 0 ? Effect.logInfo(`event retention: ${deleted} events deleted`) : Effect.void)),
      Effect.catchAllCause((cause) => Effect.logError("event retention sweep failed", cause)),
      Effect.zipRight(Effect.sleep(config.sweepIntervalMs)),
      Effect.forever,
      Effect.forkScoped
    )
  })
)
