import { Effect, Layer } from "effect"
import { sweepForever } from "../kernel/sweep.js"
import { now, millisFromTimestamp, timestampFromMillis } from "../kernel/time.js"
import { CircuitsConfig } from "./config.js"
import { ArtifactsRepo } from "./repo.js"

/** One sweep: deletes the staging areas older than `abandonedStagingMs`; returns the chunks deleted. */
export const sweepAbandonedStaging = Effect.gen(function*() {
  const artifacts = yield* ArtifactsRepo
  const config = yield* CircuitsConfig
  const at = yield* now
  return yield* artifacts.dropAbandoned(timestampFromMillis(millisFromTimestamp(at) - config.abandonedStagingMs))
})

/**
 * Uploads stream into staging areas that their request's scope deletes; a process killed mid-upload
 * never ends that scope. This loop deletes what such processes left, so a crash costs disk space
 * for a day at most. Any process may run it: a staging area that old belongs to no live upload.
 */
export const AbandonedStagingSweeper = Layer.scopedDiscard(
  Effect.gen(function*() {
    const config = yield* CircuitsConfig
    yield* sweepForever("abandoned upload staging sweep", sweepAbandonedStaging, config.stagingSweepIntervalMs)
  })
)
