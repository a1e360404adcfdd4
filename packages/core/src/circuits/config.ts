import { Context } from "effect"

/** Limits and timings of accounts' circuits. Every one is a setting of `mzk serve`/`mzk worker`. */
export interface CircuitsConfigShape {
  /** A multipart upload larger than this is refused (413 `upload_too_large`). */
  readonly maxUploadBytes: number
  /** Live circuits per account (409 `circuit_limit_reached`). */
  /** Live circuits an account may keep, every live version of a name counted (each holds its artifacts). */
  readonly maxCircuitsPerAccount: number
  /** An account's circuits `compiling` at once (409 `compilation_limit_reached`). */
  readonly maxCompilingPerAccount: number
  /** Builds this process runs at once. */
  readonly buildConcurrency: number
  /** A build's time limit (failed with `compile_timeout`); its lease outlives it by `leaseMarginMs`. */
  readonly buildTimeoutMs: number
  /** A build's memory ceiling (failed with `compile_memory_exceeded`). */
  readonly buildMemoryBytes: number
  readonly leaseMarginMs: number
  /** Idle build loops look for work this often (uploads in-process wake them at once). */
  readonly pollIntervalMs: number
  /**
   * Claims of one build before it is failed as `internal`: a build whose process died this many
   * times while it ran (a poison pill: it keeps killing workers) is not tried again.
   */
  readonly maxAttempts: number
  /**
   * A staging area older than this was left by a process that died mid-upload (an upload that
   * takes this long has long been cut off by the HTTP server) and is deleted by the sweep, which
   * runs every `stagingSweepIntervalMs`.
   */
  readonly abandonedStagingMs: number
  readonly stagingSweepIntervalMs: number
}

export const DEFAULT_CIRCUITS_CONFIG: CircuitsConfigShape = {
  maxUploadBytes: 50 * 1024 * 1024,
  maxCircuitsPerAccount: 50,
  maxCompilingPerAccount: 2,
  buildConcurrency: 1,
  buildTimeoutMs: 10 * 60_000,
  buildMemoryBytes: 4 * 1024 * 1024 * 1024,
  leaseMarginMs: 60_000,
  pollIntervalMs: 1_000,
  maxAttempts: 2,
  abandonedStagingMs: 24 * 3_600_000,
  stagingSweepIntervalMs: 3_600_000
}

export class CircuitsConfig extends Context.Reference<CircuitsConfig>()("@mzk/core/CircuitsConfig", {
  defaultValue: (): CircuitsConfigShape => DEFAULT_CIRCUITS_CONFIG
}) {}
