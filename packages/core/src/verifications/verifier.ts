import { Context, Effect, Layer, Schema } from "effect"
import { ErrorDetail } from "../kernel/errors.js"
import type { ProvingSystem } from "../kernel/provingSystem.js"

/**
 * What a proving system's module found wrong with a key, proof or public signals before any curve
 * arithmetic ran: each problem with its field's path (`verification_key.vk_delta_2`,
 * `proof.pi_a`, `public_signals`). The request's 400.
 */
export class VerifierInputInvalid extends Schema.TaggedError<VerifierInputInvalid>()("VerifierInputInvalid", {
  details: Schema.Array(ErrorDetail)
}) {}

/** A key a proving system's module accepted: how many public signals its proofs carry. */
export interface CheckedVerificationKey {
  readonly n_public: number
}

/**
 * Verification of proofs in their proving system's own format (snarkjs JSON for Groth16, PLONK
 * and FFLONK), whoever made them. One module per system behind it; the keys, proofs and signals
 * are untrusted: every field is checked (shape, protocol and curve names, canonical field
 * elements, points on the curve and in their subgroup, the count of public signals) before any
 * pairing is computed, and a problem is a `VerifierInputInvalid`, never a defect.
 */
export class Verifier extends Context.Tag("@mzk/core/Verifier")<Verifier, {
  /** The systems it verifies; any other is a 400 naming `proving_system`. */
  readonly systems: ReadonlyArray<ProvingSystem>
  /** Checks a verification key on its own (registering one); details' paths begin with `verification_key`. */
  readonly checkKey: (system: ProvingSystem, key: unknown) => Effect.Effect<CheckedVerificationKey, VerifierInputInvalid>
  /**
   * Checks the three inputs and answers the verification to run: `false` for a well-formed proof
   * that does not hold. Two steps, so a caller charges a request only once its inputs passed.
   */
  readonly prepare: (
    system: ProvingSystem,
    key: unknown,
    proof: unknown,
    publicSignals: ReadonlyArray<string>
  ) => Effect.Effect<Effect.Effect<boolean>, VerifierInputInvalid>
}>() {
  /** No system at all: what a process without `@mzk/proving` (a test's core) answers. */
  static readonly none: Layer.Layer<Verifier> = Layer.succeed(this, {
    systems: [],
    checkKey: (system) => Effect.fail(unsupported(system, [])),
    prepare: (system) => Effect.fail(unsupported(system, []))
  })
}

/** The 400 for a system the verifier has no module for. */
export const unsupported = (system: ProvingSystem, systems: ReadonlyArray<ProvingSystem>): VerifierInputInvalid =>
  new VerifierInputInvalid({
    details: [{
      path: "proving_system",
      message: systems.length === 0
        ? `${JSON.stringify(system)} proofs cannot be verified by this server`
        : `${JSON.stringify(system)} proofs cannot be verified by this server yet; it verifies ${systems.map((s) => JSON.stringify(s)).join(", ")}`
    }]
  })
