import { Clock, Effect, Layer } from "effect"
import { timestampFromMillis } from "../kernel/time.js"
import { EventsConfig } from "./config.js"
import { EventsRepo } from "./repo.js"

/**
 * Deletes the events older than the retention window, a batch per statement, until a batch comes
 * back short; returns how many it deleted. Events whose delivery is still pending stay until it
 * settles (see `EventsRepo.deleteExpired`).
 */
export const sweepExpiredEvents = Effect.gen(function*() {
  const repo = yield* EventsRepo
  const config = yield* EventsConfig
  const before = timestampFromMillis((yield* Clock.currentTimeMillis) - config.retentionMs)
  let total = 0
  for (;;) {
    const deleted = yield* repo.deleteExpired(before, config.sweepBatchSize)
    total += deleted
    if (deleted < config.sweepBatchSize) return total
  }
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
