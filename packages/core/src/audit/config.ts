import { Context } from "effect"

export interface AuditConfigShape {
  /** How long entries are kept (default 365 days: audits look back a year). */
  readonly retentionMs: number
  /** How often entries past retention are deleted. */
  readonly sweepIntervalMs: number
}

export const DEFAULT_AUDIT_CONFIG: AuditConfigShape = {
  retentionMs: 365 * 86_400_000,
  sweepIntervalMs: 3_600_000
}

export class AuditConfig extends Context.Reference<AuditConfig>()("@mzk/core/AuditConfig", {
  defaultValue: (): AuditConfigShape => DEFAULT_AUDIT_CONFIG
}) {}
