import { Context, type Effect } from "effect"
import type { StorageError } from "../kernel/errors.js"

/** One fixed-window counter to charge: `bucket` names it, `window_start` (epoch ms) dates it. */
export interface RateBucket {
  readonly bucket: string
  readonly window_start: number
  readonly limit: number
  readonly cost: number
}

export interface RateConsumeResult {
  /** True when every bucket had room and all were charged; false when none was. */
  readonly admitted: boolean
  /** Per bucket, in order: the count in the current window after the call. */
  readonly counts: ReadonlyArray<number>
}

/** Units to give back to one counter, if it still counts the window they were charged in. */
export interface RateRefund {
  readonly bucket: string
  readonly window_start: number
  readonly amount: number
}

export class RateLimitsRepo extends Context.Tag("@mzk/core/RateLimitsRepo")<RateLimitsRepo, {
  /**
   * Charges every bucket, all or nothing and atomically: a bucket whose stored window is older
   * than `window_start` starts again from zero; one whose stored window is newer (another
   * process's clock runs ahead) is charged in that newer window. Exact under any concurrency.
   */
  readonly consume: (buckets: ReadonlyArray<RateBucket>) => Effect.Effect<RateConsumeResult, StorageError>
  /**
   * Gives `amount` back to each bucket whose stored window is `window_start`, never below zero; a
   * bucket that has moved on to another window (or has none) is left as it is. Joins the caller's
   * transaction, so a refund commits exactly when the change that earns it does.
   */
  readonly refund: (refunds: ReadonlyArray<RateRefund>) => Effect.Effect<void, StorageError>
  /**
   * Per bucket, in order, its count in the window starting at `window_start` (as `consume` counts:
   * a stored window that is older counts 0), reading only. `limit` and `cost` are not used.
   */
  readonly peek: (buckets: ReadonlyArray<RateBucket>) => Effect.Effect<ReadonlyArray<number>, StorageError>
}>() {}
