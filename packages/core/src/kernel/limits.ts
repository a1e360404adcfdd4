import { Context } from "effect"

/**
 * The limits of the spec and DESIGN.md, as one configuration value. The defaults are the
 * published values; embedders and tests may provide other numbers with `Layer.succeed(Limits, …)`.
 */
export interface LimitsConfig {
  readonly maxActiveKeys: number
  /** `last_used_at` is written at most once per this interval per key. */
  readonly keyLastUsedIntervalMs: number
  readonly proofRequestsPerMinutePerKey: number
  readonly proofsPerDayPerAccount: number
  readonly maxWebhooksPerAccount: number
  /** Registered verification keys (POST /verification-keys) one account may hold; each is up to a request body's size. */
  readonly maxVerificationKeysPerAccount: number
  readonly maxBatchSize: number
  readonly maxRunningProofsPerAccount: number
}

export const DEFAULT_LIMITS: LimitsConfig = {
  maxActiveKeys: 10,
  keyLastUsedIntervalMs: 60_000,
  proofRequestsPerMinutePerKey: 60,
  proofsPerDayPerAccount: 5_000,
  maxWebhooksPerAccount: 20,
  maxVerificationKeysPerAccount: 50,
  maxBatchSize: 100,
  maxRunningProofsPerAccount: 10
}

export class Limits extends Context.Reference<Limits>()("@mzk/core/Limits", {
  defaultValue: (): LimitsConfig => DEFAULT_LIMITS
}) {}
