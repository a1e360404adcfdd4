import { Context, type Effect, Schema } from "effect"
import type { Circuit } from "../circuits/circuit.js"
import { type CircuitInputs, ProofErrorCode, type SnarkjsProof } from "./proof.js"

export interface ProverOutput {
  /** The proof as snarkjs emits it for the circuit's `proving_system` (`protocol`, `curve`, the system's points). */
  readonly proof: SnarkjsProof
  /** Public signals in circuit order, decimal strings. */
  readonly public_signals: ReadonlyArray<string>
  /**
   * The prover's own time on the proof, in milliseconds, as it measured it where the work ran
   * (a prover thread): never waiting for a thread or for its pool to start. The proof's
   * `proving_ms`; absent, the proof worker measures the call on the `Clock`.
   */
  readonly proving_ms?: number | undefined
}

/** Why a proof could not be made, classified for the `error.code` of a failed proof. */
export class ProverFailure extends Schema.TaggedError<ProverFailure>()("ProverFailure", {
  code: ProofErrorCode,
  message: Schema.String,
  /** As `ProverOutput.proving_ms`, for a proof the prover worked on and failed (an unsatisfied constraint…). */
  proving_ms: Schema.optional(Schema.Number)
}) {}

export class Prover extends Context.Tag("@mzk/core/Prover")<Prover, {
  /**
   * How many proofs it works on at once (its pool size). The proof worker claims at most this many
   * jobs, so a claimed job starts at once and its timeout measures proving, not waiting.
   */
  readonly capacity?: number
  /**
   * Succeeds once a proof would start at once: a pool started on first use has started (its
   * failing to start is `prove`'s to report). The proof worker claims nothing before, so no
   * proof's times count the prover's start. Absent: always ready.
   */
  readonly ready?: Effect.Effect<void>
  /**
   * Proves with a ready circuit, in its `proving_system`: its artifacts (by digest) are loaded on demand and kept while
   * they fit the prover's memory budget. `inputs` were validated against `circuit.inputs`.
   */
  readonly prove: (circuit: Circuit, inputs: CircuitInputs) => Effect.Effect<ProverOutput, ProverFailure>
  /**
   * Checks a proof against `circuit.verification_key`. The proof worker calls it on every proof
   * `prove` made before reporting it completed, so its cost is part of every proof's.
   */
  readonly verify: (circuit: Circuit, proof: SnarkjsProof, publicSignals: ReadonlyArray<string>) => Effect.Effect<boolean, ProverFailure>
}>() {}
