import { Clock, Effect, Layer } from "effect"
import { deleteInBatches, sweepForever } from "../kernel/sweep.js"
import { timestampFromMillis } from "../kernel/time.js"
import { RecoveriesRepo } from "../webhooks/repo.js"
import { EventsConfig } from "./config.js"
import { EventsRepo } from "./repo.js"

/**
 * Deletes the events older than the retention window, a batch per statement; returns how many.
 * Events whose delivery is still pending stay until it settles (see `EventsRepo.deleteExpired`).
 * Webhook recoveries that ended before the window go too: what they re-queued is gone with it.
 */
export const sweepExpiredEvents = Effect.gen(function*() {
  const config = yield* EventsConfig
  const before = timestampFromMillis((yield* Clock.currentTimeMillis) - config.retentionMs)
  const deleted = yield* deleteInBatches((yield* EventsRepo).deleteExpired, before, config.sweepBatchSize)
  yield* deleteInBatches((yield* RecoveriesRepo).deleteEnded, before, config.sweepBatchSize)
  return deleted
})

/** The event retention sweeper as a background loop (in `CoreLoops`): a sweep at start, then every `sweepIntervalMs`. */
export const EventRetentionSweeper = Layer.scopedDiscard(
  Effect.flatMap(EventsConfig, (config) =>
    sweepForever(
      "event retention sweep",
      Effect.tap(sweepExpiredEvents, (deleted) => (deleted > 0 ? Effect.logInfo(`event retention: ${deleted} events deleted`) : Effect.void)),
      config.sweepIntervalMs
    ))
)
