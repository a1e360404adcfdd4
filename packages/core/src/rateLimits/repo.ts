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

export class RateLimitsRepo extends Context.Tag("@mzk/core/RateLimitsRepo")<RateLimitsRepo, {
  /**
   * Charges every bucket, all or nothing and atomically: a bucket whose stored window is older
   * than `window_start` starts again from zero; one whose stored window is newer (another
   * process's clock runs ahead) is charged in that newer window. Exact under any concurrency.
   */
  readonly consume: (buckets: ReadonlyArray<RateBucket>) => Effect.Effect<RateConsumeResult, StorageError>
}>() {}
