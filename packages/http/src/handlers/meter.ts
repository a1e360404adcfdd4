import { type Metered, type RateLimitExceeded } from "@mzk/core"
import { Effect, FiberRef } from "effect"
import { CurrentRequestNotes } from "../requestPipeline.js"

/**
 * Runs a metered operation and leaves its rate-limit windows for the response headers: on success
 * the RateLimit fields, on a 429 those and `Retry-After`. Returns the operation's value.
 */
export const metered = <A, E, R>(operation: Effect.Effect<Metered<A>, E | RateLimitExceeded, R>) =>
  Effect.gen(function*() {
    const notes = yield* FiberRef.get(CurrentRequestNotes)
    const result = yield* operation.pipe(
      Effect.tapError((error) =>
        Effect.sync(() => {
          if (typeof error === "object" && error !== null && "_tag" in error && error._tag === "RateLimitExceeded") {
            const limited = error as RateLimitExceeded
            notes.rateLimit = limited.windows
            notes.retryAfterSeconds = limited.retry_after_seconds
          }
        })
      )
    )
    notes.rateLimit = result.rate_limits
    return result.value
  })
