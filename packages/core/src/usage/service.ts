import { Context, Effect, Layer, Schema } from "effect"
import { RateLimitWindow, type StorageError } from "../kernel/errors.js"
import type { AccountId } from "../kernel/ids.js"
import { Timestamp, timestampFromMillis } from "../kernel/time.js"
import { PROOF_STATUSES, type ProofStatus } from "../proofs/proof.js"
import { ProofsRepo } from "../proofs/repo.js"
import { RateLimits } from "../rateLimits/service.js"

const DAY_MS = 86_400_000

/** A rate-limit window as `GET /usage` shows it: the RateLimit fields' numbers, with what was used and when it resets. */
export const UsageWindow = Schema.Struct({
  ...RateLimitWindow.fields,
  used: Schema.Int.annotations({ description: "What this window has counted so far: requests (`key`) or proofs (`daily`)" }),
  resets_at: Timestamp.annotations({ description: "When the window starts again from zero" })
}).annotations({ identifier: "UsageWindow" })
export type UsageWindow = typeof UsageWindow.Type

const seconds = Schema.Number.annotations({ description: "Seconds, to the millisecond" })

export const CircuitUsageReport = Schema.Struct({
  circuit: Schema.String,
  proofs_today: Schema.Int.annotations({ description: "Proofs of the circuit that settled (completed or failed; by `finished_at`) today, UTC" }),
  proving_seconds_today: seconds,
  proofs_this_month: Schema.Int,
  proving_seconds_this_month: seconds
}).annotations({ identifier: "CircuitUsage" })

export const Usage = Schema.Struct({
  as_of: Timestamp,
  day_start: Timestamp.annotations({ description: "The start of today, UTC: the daily quota's window" }),
  month_start: Timestamp.annotations({ description: "The start of this month, UTC" }),
  rate_limits: Schema.Struct({
    per_minute: Schema.NullOr(UsageWindow).annotations({
      description: "The calling key's proof requests this minute (60 a minute per key); null for a session, which has none"
    }),
    per_day: UsageWindow.annotations({ description: "The account's proofs today, UTC (5,000 a day), as the quota counts them" })
  }),
  proofs_today: Schema.Struct(
    Object.fromEntries(PROOF_STATUSES.map((status) => [status, Schema.Int])) as { [S in ProofStatus]: typeof Schema.Int }
  ).annotations({ description: "The account's proofs created today (UTC), by their status now" }),
  proving_seconds: Schema.Struct({ today: seconds, this_month: seconds }).annotations({
    description: "Worker time of the account's proofs that settled (completed or failed; by `finished_at`) today and this month, " +
      "UTC: the sum of their `duration_ms`. No proof starts before the prover's threads have, so their start is no proof's time"
  }),
  circuits: Schema.Array(CircuitUsageReport).annotations({ description: "The same per circuit, for circuits with a proof settled this month, by name" })
}).annotations({ identifier: "Usage" })
export type Usage = typeof Usage.Type

/** Milliseconds as seconds, kept to the millisecond. */
const toSeconds = (ms: number) => Math.round(ms) / 1000

/**
 * `GET /usage`: what an account has used and has left, read by SQL aggregates at the `Clock`'s now.
 * The windows are the ones a metered request of the caller would be charged against (the key's
 * minute for a key, the account's UTC day); the proof counts and times come from the proofs table.
 */
export class UsageReports extends Context.Tag("@mzk/core/UsageReports")<UsageReports, {
  readonly get: (accountId: AccountId) => Effect.Effect<Usage, StorageError>
}>() {
  static readonly layer = Layer.effect(
    this,
    Effect.gen(function*() {
      const repo = yield* ProofsRepo
      const rateLimits = yield* RateLimits

      const get = (accountId: AccountId) =>
        Effect.gen(function*() {
          const windows = yield* rateLimits.current(accountId)
          const nowMs = yield* Effect.clockWith((clock) => Effect.succeed(clock.unsafeCurrentTimeMillis()))
          const dayStartMs = nowMs - (nowMs % DAY_MS)
          const date = new Date(nowMs)
          const monthStartMs = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1)
          const usage = yield* repo.usage(accountId, {
            dayStart: timestampFromMillis(dayStartMs),
            monthStart: timestampFromMillis(monthStartMs)
          })
          const report = (window: RateLimitWindow): UsageWindow => ({
            ...window,
            used: window.limit - window.remaining,
            resets_at: timestampFromMillis(nowMs + window.reset_seconds * 1000 - (nowMs % 1000))
          })
          const daily = windows.find((w) => w.policy === "daily")!
          const key = windows.find((w) => w.policy === "key")
          const today = usage.circuits.reduce((sum, c) => sum + c.proving_ms_today, 0)
          const month = usage.circuits.reduce((sum, c) => sum + c.proving_ms_month, 0)
          return {
            as_of: timestampFromMillis(nowMs),
            day_start: timestampFromMillis(dayStartMs),
            month_start: timestampFromMillis(monthStartMs),
            rate_limits: { per_minute: key === undefined ? null : report(key), per_day: report(daily) },
            proofs_today: Object.fromEntries(PROOF_STATUSES.map((status) => [status, usage.createdTodayByStatus[status] ?? 0])) as {
              [S in ProofStatus]: number
            },
            proving_seconds: { today: toSeconds(today), this_month: toSeconds(month) },
            circuits: usage.circuits.map((c) => ({
              circuit: c.circuit,
              proofs_today: c.proofs_today,
              proving_seconds_today: toSeconds(c.proving_ms_today),
              proofs_this_month: c.proofs_month,
              proving_seconds_this_month: toSeconds(c.proving_ms_month)
            }))
          } satisfies Usage
        })

      return { get }
    })
  )
}
