import type { RateLimitWindow } from "@mzk/core"

/** The IETF RateLimit fields: the policies, and the remaining budget of the tightest one. */
export const rateLimitHeaders = (windows: ReadonlyArray<RateLimitWindow>): Record<string, string> => {
  const tightest = [...windows].sort((a, b) => a.remaining - b.remaining || b.reset_seconds - a.reset_seconds)[0]
  return {
    "ratelimit-policy": windows.map((w) => `"${w.policy}";q=${w.limit};w=${w.window_seconds}`).join(", "),
    ...(tightest === undefined ? {} : { ratelimit: `"${tightest.policy}";r=${tightest.remaining};t=${tightest.reset_seconds}` })
  }
}
