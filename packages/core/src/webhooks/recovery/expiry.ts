import { Effect } from "effect"
import { deleteInBatches } from "../../kernel/sweep.js"
import type { Timestamp } from "../../kernel/time.js"
import { RecoveriesRepo } from "./repo.js"

/**
 * Deletes the recoveries that ended before `before`, the event retention cutoff: the deliveries
 * they re-queued are deleted with their events, so their record has nothing left to describe.
 */
export const makeRecoveryExpiry = Effect.map(RecoveriesRepo, (repo) => (before: Timestamp, batchSize: number) =>
  Effect.asVoid(deleteInBatches(repo.deleteEnded, before, batchSize)))
