import { type ProvingSystem, Verifier, VerifierInputInvalid } from "@mzk/core"
import { Effect, Layer } from "effect"

const SNARKJS_SYSTEMS: ReadonlyArray<ProvingSystem> = ["groth16", "plonk", "fflonk"]

const invalid = (path: string, message: string) => new VerifierInputInvalid({ details: [{ path, message }] })

const protocolOf = (value: unknown): unknown =>
  typeof value === "object" && value !== null ? (value as Record<string, unknown>).protocol : undefined

const checkKey = (system: ProvingSystem, key: unknown) => {
  if (!SNARKJS_SYSTEMS.includes(system)) return Effect.fail(invalid("proving_system", `${JSON.stringify(system)} is not verified here`))
  const nPublic = typeof key === "object" && key !== null ? (key as Record<string, unknown>).nPublic : undefined
  if (protocolOf(key) !== system) return Effect.fail(invalid("verification_key.protocol", `must be ${JSON.stringify(system)}`))
  if (typeof nPublic !== "number" || !Number.isInteger(nPublic) || nPublic < 0) {
    return Effect.fail(invalid("verification_key.nPublic", "must be a non-negative integer"))
  }
  return Effect.succeed({ n_public: nPublic })
}

/**
 * A verifier without curve arithmetic, for tests of code built on mzk, as `FakeProver` is a prover
 * without one: a key is `{ protocol, nPublic }` as snarkjs writes it, a proof holds only its
 * `protocol`, and a proof is valid when its protocol is the system asked for and its public
 * signals number the key's `nPublic`. A key of another system is the 400 the real one answers.
 */
export const FakeVerifier: Layer.Layer<Verifier> = Layer.succeed(Verifier, {
  systems: SNARKJS_SYSTEMS,
  checkKey,
  prepare: (system, key, proof, publicSignals) =>
    Effect.flatMap(checkKey(system, key), ({ n_public }) =>
      publicSignals.length !== n_public
        ? Effect.fail(invalid("public_signals", `must hold ${n_public} signals, as the key says`))
        : Effect.succeed(Effect.succeed(protocolOf(proof) === system)))
})
