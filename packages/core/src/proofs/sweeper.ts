import { Effect, Layer } from "effect"
import { ProofsConfig } from "./config.js"
import { ProofsRepo } from "./repo.js"
import { Telemetry } from "../kernel/telemetry.js"
import { Transactor } from "../kernel/transaction.js"
import { Events } from "../events/service.js"
import { now } from "../kernel/time.js"
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
