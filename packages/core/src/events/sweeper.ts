import { Clock, Effect, Layer } from "effect"
import { deleteInBatches, sweepForever } from "../kernel/sweep.js"
import { timestampFromMillis } from "../kernel/time.js"
import { EventsConfig } from "./config.js"
import { EventsRepo } from "./repo.js"
import { EventSubscribers } from "./subscribers.js"

/**
 * Deletes the events older than the retention window, a batch per statement; returns how many.
 * Events whose delivery is still pending stay until it settles (see `EventsRepo.deleteExpired`).
 * Then each subscriber deletes what it kept for events of that age (webhooks: the recoveries that
 * ended before the window, since what they re-queued is gone with it).
 */
export const sweepExpiredEvents = Effect.gen(function*() {
  const config = yield* EventsConfig
  const before = timestampFromMillis((yield* Clock.currentTimeMillis) - config.retentionMs)
  const deleted = yield* deleteInBatches((yield* EventsRepo).deleteExpired, before, config.sweepBatchSize)
  for (const subscriber of yield* EventSubscribers) {
    if (subscriber.expire !== undefined) yield* subscriber.expire(before, config.sweepBatchSize)
  }
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
