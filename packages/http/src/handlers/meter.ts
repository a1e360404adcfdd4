import { type Metered, type RateLimitExceeded } from "@mzk/core"
import { Effect, FiberRef } from "effect"
import { CurrentRequest, type RequestState } from "../requestPipeline.js"

const isRateLimited = (error: unknown): error is RateLimitExceeded =>
  typeof error === "object" && error !== null && "_tag" in error && error._tag === "RateLimitExceeded"

/**
 * Runs a metered operation and leaves its rate-limit windows for the response headers: on success
 * the RateLimit fields, on a 429 those and `Retry-After`. Returns the operation's value.
 */
export const metered = <A, E, R>(operation: Effect.Effect<Metered<A>, E | RateLimitExceeded, R>) =>
  Effect.flatMap(FiberRef.get(CurrentRequest), (state) => {
    const notes: Omit<RequestState, "principal"> = state ?? {}
    return operation.pipe(
      Effect.tapError((error) =>
        Effect.sync(() => {
          if (!isRateLimited(error)) return
          notes.rateLimit = error.windows
          notes.retryAfterSeconds = error.retry_after_seconds
        })
      ),
      Effect.map((result) => {
        notes.rateLimit = result.rate_limits
        return result.value
      })
    )
  })
