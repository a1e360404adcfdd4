import { Context } from "effect"

/** How the proof worker and retention sweeper run. Defaults are DESIGN.md's. */
export interface ProofsConfigShape {
  /** Proof generation limit; past it the proof fails with `timeout`. */
  readonly timeoutMs: number
  /** Settled proofs expire this long after they settle. */
  readonly retentionMs: number
  /** A claim outlives the timeout by this much before another worker may take the proof over. */
  readonly leaseMarginMs: number
  /** Idle workers look for queued proofs this often (proofs queued in-process wake them at once). */
  readonly pollIntervalMs: number
  /**
   * While a worker runs proofs, it checks this often that each is still its own (one read by
   * primary key) and stops those that are not: canceled, or taken over after a lapsed lease. A
   * cancel in the same process, or announced by Postgres, is seen at once; this bounds the rest.
   */
  readonly claimCheckIntervalMs: number
  readonly sweepIntervalMs: number
  /** Proofs this process works on at once; default: the prover's capacity. */
  readonly workerConcurrency?: number
  /** Claims of one proof before it is failed as `internal` (a proof that keeps killing workers). */
  readonly maxAttempts: number
}

export const DEFAULT_PROOFS_CONFIG: ProofsConfigShape = {
  timeoutMs: 60_000,
  retentionMs: 30 * 86_400_000,
  leaseMarginMs: 30_000,
  pollIntervalMs: 1_000,
  claimCheckIntervalMs: 1_000,
  sweepIntervalMs: 60_000,
  maxAttempts: 3
}

export class ProofsConfig extends Context.Reference<ProofsConfig>()("@mzk/core/ProofsConfig", {
  defaultValue: (): ProofsConfigShape => DEFAULT_PROOFS_CONFIG
}) {}
