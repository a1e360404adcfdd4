import { Layer } from "effect"
import { ProofDeadlineSweeper, ProofRetentionSweeper } from "./sweeper.js"
import { ProofWorker } from "./worker.js"

/**
 * The proof background loops, started when the layer is built and stopped when its scope closes.
 * Build it over `CoreServices` (which holds the shared `ProofWakeup`) in `serve` or `worker`.
 */
export const ProofLoops = Layer.mergeAll(ProofWorker.layer, ProofRetentionSweeper, ProofDeadlineSweeper)
