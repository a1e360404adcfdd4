import { Context } from "effect"

export interface IdempotencyConfigShape {
  /** How long a key's response is kept and replayed (Stripe: 24 h). */
  readonly ttlMs: number
  /** How long an in-flight request holds its key before another may take it over (a process that died mid-request). */
  readonly lockMs: number
  /** How often expired keys are deleted. */
  readonly sweepIntervalMs: number
}

export const DEFAULT_IDEMPOTENCY_CONFIG: IdempotencyConfigShape = {
  ttlMs: 86_400_000,
  lockMs: 300_000,
  sweepIntervalMs: 3_600_000
}

export class IdempotencyConfig extends Context.Reference<IdempotencyConfig>()("@mzk/core/IdempotencyConfig", {
  defaultValue: (): IdempotencyConfigShape => DEFAULT_IDEMPOTENCY_CONFIG
}) {}
