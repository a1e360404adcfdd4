import { Effect } from "effect"
import { rateLimitHeaders } from "../../wire/rateLimit.js"
import type { Answer, Next, RequestRecord } from "../pipeline.js"

/**
 * The encoding stage: `Request-Id` on every response; the RateLimit fields and `Retry-After` that a
 * metered endpoint, or its 429, reported on the answer (not through the core's return types).
 */
export const stamp = <R extends RequestRecord>(record: R, next: Next<R>): Effect.Effect<Answer, unknown> =>
  Effect.map(next(record), ({ rateLimit, retryAfterSeconds, ...response }): Answer => ({
    ...response,
    headers: {
      ...response.headers,
      ...(rateLimit === undefined ? {} : rateLimitHeaders(rateLimit)),
      ...(retryAfterSeconds === undefined ? {} : { "retry-after": String(retryAfterSeconds) }),
      "request-id": record.requestId
    }
  }))
