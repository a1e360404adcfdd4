import {
  type Circuit,
  type CircuitInputs,
  ProverFailure,
  type ProverOutput,
  type ProvingSystem,
  type SnarkjsProof,
  validateCircuitInputs
} from "@mzk/core"
import { type Effect, Either, Schema } from "effect"

/**
 * How proofs of one proving system are made and checked. The pool holds one lane per system
 * (`ProverLanes`), so a proof goes to its circuit's system's lane and nothing else branches on the
 * system: a new proving system is a new entry there (a lane of its own, or an existing lane that
 * can prove it).
 */
export interface ProverLane {
  readonly prove: (circuit: Circuit, inputs: CircuitInputs) => Effect.Effect<ProverOutput, ProverFailure>
  readonly verify: (circuit: Circuit, proof: SnarkjsProof, publicSignals: ReadonlyArray<string>) => Effect.Effect<boolean, ProverFailure>
}

/** Every proving system's lane: a system the core knows without a lane here does not compile. */
export type ProverLanes = { readonly [System in ProvingSystem]: ProverLane }

/** The pool could not start: artifacts missing or a thread failed to load them. */
export class ProverStartupError extends Schema.TaggedError<ProverStartupError>()("ProverStartupError", {
  message: Schema.String
}) {}

/**
 * The prover's own check of a proof's inputs (defence in depth: the witness calculator would
 * silently reduce non-canonical values mod r): the core's rule, the one that refused requests
 * before they were queued, as one message naming each bad input by path.
 */
export const checkInputs = (circuit: Circuit, inputs: CircuitInputs): Either.Either<CircuitInputs, string> =>
  Either.mapBoth(validateCircuitInputs(circuit, inputs), {
    onLeft: (details) => details.map((d) => `${d.path}: ${d.message}`).join("; "),
    onRight: (valid) => valid.inputs
  })

