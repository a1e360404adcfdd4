/** One rate-limit policy, from `RateLimit-Policy: "key";q=60;w=60, "daily";q=5000;w=86400`. */
export interface RateLimitPolicy {
  /** `key` (per API key) or `daily` (per account). */
  readonly name: string
  /** Requests allowed per window. */
  readonly limit: number
  readonly windowSeconds: number
}

/**
 * The proof rate limits as a metered response reports them: every policy, and the remaining
 * budget of the tightest one (`RateLimit: "key";r=59;t=42`).
 */
export interface RateLimit {
  readonly policies: ReadonlyArray<RateLimitPolicy>
  /** The policy closest to its limit. */
  readonly policy: string
  readonly remaining: number
  /** Seconds until that policy's window resets. */
  readonly resetSeconds: number
}

/** `"name";a=1;b=2` items of a structured-field list, by name. */
const items = (value: string): Array<{ readonly name: string; readonly params: Map<string, number> }> =>
  value.split(",").flatMap((item) => {
    const [rawName, ...params] = item.split(";").map((part) => part.trim())
    const name = rawName?.replace(/^"(.*)"$/, "$1")
    if (name === undefined || name === "") return []
    const parsed = new Map<string, number>()
    for (const param of params) {
      const eq = param.indexOf("=")
      if (eq > 0) parsed.set(param.slice(0, eq).trim(), Number(param.slice(eq + 1).trim()))
    }
    return [{ name, params: parsed }]
  })

/** The RateLimit fields of a response, or undefined when it has none (an endpoint that is not metered). */
export const parseRateLimit = (headers: Headers): RateLimit | undefined => {
  const policyHeader = headers.get("ratelimit-policy")
  const stateHeader = headers.get("ratelimit")
  if (policyHeader === null || stateHeader === null) return undefined
  const state = items(stateHeader)[0]
  if (state === undefined) return undefined
  return {
    policies: items(policyHeader).map((item) => ({
      name: item.name,
      limit: item.params.get("q") ?? Number.NaN,
      windowSeconds: item.params.get("w") ?? Number.NaN
    })),
    policy: state.name,
    remaining: state.params.get("r") ?? Number.NaN,
    resetSeconds: state.params.get("t") ?? Number.NaN
  }
}
