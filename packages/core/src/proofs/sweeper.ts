import { Clock, Effect, Layer } from "effect"
import { ProofsConfig } from "./config.js"
import { ProofsRepo } from "./repo.js"
import { Telemetry } from "../kernel/telemetry.js"
import { Transactor } from "../kernel/transaction.js"
import { Events } from "../events/service.js"
import { now } from "../kernel/time.js"
import { overdueError, settledTimes } from "./proof.js"
import { sweepForever } from "../kernel/sweep.js"
import { observeProof } from "./observe.js"

const BATCH = 100

/**
 * Expires settled proofs past their `expires_at` (retention, default 30 days): drops the blob and
 * records `proof.expired` in the same transaction, a batch at a time so one transaction stays
 * short. The claim is the repository's conditional write, so several sweepers never expire a proof
 * twice.
 */
export const sweepExpiredProofs = Effect.gen(function*() {
  const tx = yield* Transactor
  const repo = yield* ProofsRepo
  const events = yield* Events
  const telemetry = yield* Telemetry
  let total = 0
  for (;;) {
    const expired = yield* tx.transaction(Effect.gen(function*() {
      const at = yield* now
      const rows = yield* repo.expireDue(at, BATCH)
      for (const row of rows) {
        yield* tx.afterCommit(observeProof(telemetry, row, "expired"))
        yield* events.record(row.account_id, "proof.expired", {
          proof_id: row.id,
          circuit: row.circuit,
          circuit_version: row.circuit_version,
          status: "expired",
          created_at: row.created_at,
          expired_at: at,
          metadata: row.metadata
        })
      }
      return rows.length
    }))
    total += expired
    if (expired < BATCH) return total
  }
})

/** The retention sweeper as a scoped background loop: a sweep at start, then every `sweepIntervalMs`. */
export const ProofRetentionSweeper = Layer.scopedDiscard(
  Effect.gen(function*() {
    const config = yield* ProofsConfig
    yield* sweepForever("proof retention sweep", sweepExpiredProofs, config.sweepIntervalMs)
  })
)

/**
 * Fails the queued proofs whose request's deadline (`timeout_ms`) has passed, as `timeout`, each
 * with its `proof.failed` in the same transaction, a batch at a time. Such a proof was never
 * started, so it has no `started_at`, its `duration_ms` is 0 and `proving_ms` null; it stays charged, like every timeout
 * (`isRefundedFailure`): the account chose the deadline.
 */
export const sweepOverdueProofs = Effect.gen(function*() {
  const tx = yield* Transactor
  const repo = yield* ProofsRepo
  const events = yield* Events
  const telemetry = yield* Telemetry
  const config = yield* ProofsConfig
  let total = 0
  for (;;) {
    const failed = yield* tx.transaction(Effect.gen(function*() {
      const { duration_ms, expires_at, finished_at } = settledTimes(null, yield* Clock.currentTimeMillis, config.retentionMs)
      const rows = yield* repo.failOverdue(finished_at, BATCH, { error: overdueError, duration_ms, proving_ms: null, finished_at, expires_at })
      for (const row of rows) {
        yield* tx.afterCommit(observeProof(telemetry, row, "failed"))
        yield* events.record(row.account_id, "proof.failed", {
          proof_id: row.id,
          circuit: row.circuit,
          circuit_version: row.circuit_version,
          proving_system: row.proving_system,
          status: "failed",
          error: overdueError,
          metadata: row.metadata,
          public_inputs: row.public_inputs,
          duration_ms,
          created_at: row.created_at
        })
      }
      return rows.length
    }))
    total += failed
    if (failed < BATCH) return total
  }
})

/**
 * The deadline sweep as a scoped background loop, every `pollIntervalMs` (a second by default): a
 * queued proof is failed within that of its deadline, however long its account's queue.
 */
export const ProofDeadlineSweeper = Layer.scopedDiscard(
  Effect.gen(function*() {
    const config = yield* ProofsConfig
    yield* sweepForever("proof deadline sweep", sweepOverdueProofs, config.pollIntervalMs)
  })
)
