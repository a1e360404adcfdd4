import { Context, Effect, FiberRef, GlobalValue, Layer } from "effect"
import { RateLimitExceeded, type RateLimitWindow, type StorageError } from "../kernel/errors.js"
import { Limits, type LimitsConfig } from "../kernel/limits.js"
import { Telemetry } from "../kernel/telemetry.js"
import type { AccountId } from "../kernel/ids.js"
import { type Actor, currentRequest } from "../kernel/requestContext.js"
import { millisFromTimestamp, type Timestamp } from "../kernel/time.js"
import { type RateBucket, RateLimitsRepo, type RateRefund } from "./repo.js"

const MINUTE_MS = 60_000
const DAY_MS = 86_400_000

/** The fixed window of `windowMs` that `ms` falls in, by its start. */
const windowStart = (ms: number, windowMs: number) => ms - (ms % windowMs)
/** The counter of an account's daily proof quota. */
const dailyBucket = (accountId: AccountId) => `daily:${accountId}`

/** A metered operation's result with the rate-limit windows its response headers report. */
export interface Metered<A> {
  readonly value: A
  readonly rate_limits: ReadonlyArray<RateLimitWindow>
}

/**
 * The windows the last admitted request of this fiber was charged against. The windows are about
 * the response (its RateLimit fields), not about what the operation returns, so they stay out of
 * the services' return types: whoever answers (the HTTP `handle` stage, an embedder that wants
 * them) reads them with `metered`. A FiberRef for the reason `RequestContext` is one.
 */
const MeteredWindows: FiberRef.FiberRef<ReadonlyArray<RateLimitWindow>> = GlobalValue.globalValue(
  Symbol.for("@mzk/core/MeteredWindows"),
  () => FiberRef.unsafeMake<ReadonlyArray<RateLimitWindow>>([])
)

/**
 * Runs `effect` with a fresh slot for its rate-limit windows and returns its value with the
 * windows it was charged against (none where it was not metered, or refused before the charge).
 */
export const metered = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<Metered<A>, E, R> =>
  Effect.locally(
    Effect.flatMap(effect, (value) => Effect.map(FiberRef.get(MeteredWindows), (rate_limits) => ({ value, rate_limits }))),
    MeteredWindows,
    []
  )

/** What one metered request costs: one request against its key, `proofs` against the day. */
export interface ProofRequestCost {
  /** Proofs the request creates: 1 for a single proof, the batch size, 0 for a verification. */
  readonly proofs: number
}

interface Policy {
  readonly name: RateLimitWindow["policy"]
  readonly bucket: RateBucket
  readonly windowMs: number
}

/** The 429 for a refused request: the policy that was hit, its windows and when to retry. */
const exceeded = (policies: ReadonlyArray<Policy>, windows: ReadonlyArray<RateLimitWindow>, counts: ReadonlyArray<number>) => {
  const hit = policies.findIndex((p, i) => (counts[i] ?? 0) + p.bucket.cost > p.bucket.limit)
  const policy = policies[hit === -1 ? 0 : hit]!
  const window = windows[hit === -1 ? 0 : hit]!
  return new RateLimitExceeded({
    message: policy.name === "key"
      ? `Rate limit exceeded: ${policy.bucket.limit} proof requests a minute per key; retry in ${window.reset_seconds} s`
      : `Daily proof quota exceeded: ${policy.bucket.limit} proofs a UTC day per account, ` +
        `${window.remaining} left, ${policy.bucket.cost} requested; resets in ${window.reset_seconds} s`,
    policy: policy.name,
    retry_after_seconds: window.reset_seconds,
    windows
  })
}

/**
 * The proof rate limits: `60` proof requests per key per minute and `5,000` proofs per account per
 * UTC day. Both are fixed windows (the minute on the clock, the UTC day), charged together and all
 * or nothing, so a refused request costs nothing. Fixed windows make the headers exact and the
 * check one atomic upsert per window in SQL; the price is that a key may send up to twice its
 * limit across a minute boundary, which a per-minute budget tolerates.
 */
export class RateLimits extends Context.Tag("@mzk/core/RateLimits")<RateLimits, {
  /**
   * Admits a metered request of `accountId` or fails naming the exhausted policy. The acting key,
   * whose minute it is also charged to, is the current request's actor (`RequestContext`); work
   * without a key (a session, the CLI, an embedder's own call as `system`) has only the daily
   * quota. Returns the windows, and records them for `metered`.
   */
  readonly admitProofRequest: (
    accountId: AccountId,
    cost: ProofRequestCost
  ) => Effect.Effect<ReadonlyArray<RateLimitWindow>, RateLimitExceeded | StorageError>
  /**
   * Gives canceled proofs back to the account's daily quota: one unit per proof, to the UTC day it
   * was created (and charged) in, if that day is still the current one; a past day's count no
   * longer limits anything. The key's minute is not refunded: the request was made. Run it in the
   * cancel's transaction, so the refund happens exactly when the cancel does, once.
   */
  readonly refundProofs: (accountId: AccountId, createdAt: ReadonlyArray<Timestamp>) => Effect.Effect<void, StorageError>
  /**
   * The windows a metered request of the current actor for `accountId` would be charged against
   * now, as they stand, charging nothing: the key's minute (for a key) and the account's day.
   */
  readonly current: (accountId: AccountId) => Effect.Effect<ReadonlyArray<RateLimitWindow>, StorageError>
}>() {
  static readonly layer = Layer.effect(
    this,
    Effect.gen(function*() {
      const repo = yield* RateLimitsRepo
      const telemetry = yield* Telemetry

      /** The windows a request of `actor` for `accountId` is charged against at `nowMs`: the key's minute (keys only), the day. */
      const policiesFor = (accountId: AccountId, actor: Actor, limits: LimitsConfig, nowMs: number, cost: ProofRequestCost) => {
        const policies: Array<Policy> = []
        // Session requests have no key, so only the account's daily quota meters them.
        if (actor.type === "api_key" && actor.id !== null) {
          policies.push({
            name: "key",
            windowMs: MINUTE_MS,
            bucket: {
              bucket: `key:${actor.id}`,
              window_start: windowStart(nowMs, MINUTE_MS),
              limit: limits.proofRequestsPerMinutePerKey,
              cost: 1
            }
          })
        }
        policies.push({
          name: "daily",
          windowMs: DAY_MS,
          bucket: {
            bucket: dailyBucket(accountId),
            window_start: windowStart(nowMs, DAY_MS),
            limit: limits.proofsPerDayPerAccount,
            cost: cost.proofs
          }
        })
        return policies
      }

      /** The windows as the RateLimit fields and `GET /usage` report them, given each one's count. */
      const windowsOf = (policies: ReadonlyArray<Policy>, counts: ReadonlyArray<number>, nowMs: number) =>
        policies.map((policy, i): RateLimitWindow => ({
          policy: policy.name,
          limit: policy.bucket.limit,
          remaining: Math.max(0, policy.bucket.limit - (counts[i] ?? 0)),
          window_seconds: policy.windowMs / 1000,
          reset_seconds: Math.max(1, Math.ceil((policy.bucket.window_start + policy.windowMs - nowMs) / 1000))
        }))

      // Runs on every metered request: plain steps rather than a generator.
      const admitProofRequest = (accountId: AccountId, cost: ProofRequestCost) =>
        Effect.flatMap(Effect.zip(Limits, currentRequest), ([limits, { actor }]) =>
          Effect.clockWith((clock) => {
            const nowMs = clock.unsafeCurrentTimeMillis()
            const policies = policiesFor(accountId, actor, limits, nowMs, cost)
            return Effect.flatMap(repo.consume(policies.map((p) => p.bucket)), (result) => {
              const windows = windowsOf(policies, result.counts, nowMs)
              if (result.admitted) return Effect.as(FiberRef.set(MeteredWindows, windows), windows)
              const refusal = exceeded(policies, windows, result.counts)
              telemetry.rateLimited(refusal.policy)
              return Effect.fail(refusal)
            })
          }))

      const current = (accountId: AccountId) =>
        Effect.flatMap(Effect.zip(Limits, currentRequest), ([limits, { actor }]) =>
          Effect.clockWith((clock) => {
            const nowMs = clock.unsafeCurrentTimeMillis()
            const policies = policiesFor(accountId, actor, limits, nowMs, { proofs: 0 })
            return Effect.map(repo.peek(policies.map((p) => p.bucket)), (counts) => windowsOf(policies, counts, nowMs))
          }))

      const refundProofs = (accountId: AccountId, createdAt: ReadonlyArray<Timestamp>) =>
        Effect.clockWith((clock) => {
          const today = windowStart(clock.unsafeCurrentTimeMillis(), DAY_MS)
          const amount = createdAt.filter((at) => windowStart(millisFromTimestamp(at), DAY_MS) === today).length
          if (amount === 0) return Effect.void
          const refund: RateRefund = { bucket: dailyBucket(accountId), window_start: today, amount }
          return repo.refund([refund])
        })

      return { admitProofRequest, current, refundProofs }
    })
  )
}
