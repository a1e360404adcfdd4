// What a prover thread (proveThread.mjs) and its lane (threads.ts) say to each other, typed once
// for both sides: the thread's workerData, the jobs it takes and the replies it gives.
import type { Digest, ProverFailure, ProvingSystem, SnarkjsProof } from "@mzk/core"
import type { EngineChoice } from "./engine.js"

/** Proving yields to the API on a busy machine: `low` is nice 10, `idle` SCHED_IDLE (or nice 19). */
export type ProverPriority = "normal" | "low" | "idle"

/** A circuit's files as a thread loads them: each checked against its digest. */
export interface CircuitFiles {
  readonly wasm: { readonly digest: Digest; readonly path: string }
  readonly zkey: { readonly digest: Digest; readonly path: string; readonly size: number }
  readonly system: ProvingSystem
}

/** What the thread counts, summed over threads by the lane (`ProverStats`). */
export interface ThreadStats {
  readonly loads: number
  readonly hits: number
  readonly evictions: number
  readonly entries: number
  readonly bytes: number
}

/** A prover thread's workerData. */
export interface ProverThreadData {
  readonly engine: EngineChoice["engine"]
  readonly threadsPerProof: number
  readonly priority: ProverPriority
  /** What the thread's cached circuits may hold in all. */
  readonly memoryBudgetBytes: number
  /** Native: the most one key's tables may take, and what one key may hold in all. */
  readonly tableBudgetMB: number
  readonly memoryBudgetMB: number
  readonly proofsInFlight: number
  readonly tableCacheDir: string
  /** Native: the threads the first load of a key builds its tables with. */
  readonly loadThreads: number
  readonly singleThreadedCurve: boolean
  /** Loaded before the thread says it is ready. */
  readonly preload: ReadonlyArray<CircuitFiles>
  /** snarkjsThreadData's, for ffjavascript's web-worker import. */
  readonly mod: string
  readonly type: "module"
  readonly name: string
  /** Shared with the lane: nonzero asks a native proof in progress to stop. */
  readonly cancelFlag: Int32Array
}

export type ProverJob =
  | { readonly op: "prove"; readonly circuit: CircuitFiles; readonly inputs: Record<string, unknown> }
  | {
    readonly op: "verify"
    readonly vkey: unknown
    readonly proof: SnarkjsProof
    readonly publicSignals: ReadonlyArray<string>
    readonly system: ProvingSystem
  }

export type ProverJobMessage = ProverJob & { readonly id: number }

/** A thread's answer to a job, as it reports it (`elapsedMs` and `stats` added to each). */
export type ProverAnswer =
  | { readonly ok: true; readonly proof: SnarkjsProof; readonly publicSignals: ReadonlyArray<string> }
  | { readonly ok: true; readonly valid: boolean }
  | { readonly ok: false; readonly code: ProverFailure["code"]; readonly message: string; readonly corrupt?: Digest }

export type ProverReply = ProverAnswer & {
  readonly stats?: ThreadStats
  /** The thread's own time on the job, milliseconds (absent when the thread stopped instead of answering). */
  readonly elapsedMs?: number
}

/** The thread's first message, once its preloads are in. */
export interface ProverReady {
  readonly ready: true
  readonly stats: ThreadStats
}
