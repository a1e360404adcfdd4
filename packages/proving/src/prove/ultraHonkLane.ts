import { type Circuit, type CircuitInputs, ProverFailure, type ProverOutput, type SnarkjsProof } from "@mzk/core"
import { Duration, Effect, Either } from "effect"
import { readFileSync } from "node:fs"
import type { ArtifactFiles } from "../artifacts/files.js"
import { wasmPages } from "../build/compiler.js"
import {
  type NoirProgram,
  proveUltraHonk,
  publicSignalsDecimal,
  UltraHonkError,
  ultraHonkProofRecord,
  verifyUltraHonkRecord
} from "../noir/index.js"
import { checkInputs, type ProverLane } from "./lane.js"

/**
 * UltraHonk proofs of Noir programs (bb.js): beside the snarkjs/native threads, with as many at
 * once as the pool has threads, each under its own time limit and with Barretenberg's wasm memory
 * capped. bb.js runs its wasm on a worker thread of its own; noir_js computes the witness here.
 * A proof past its limit is abandoned (its result discarded), not killed: bb.js offers no way to
 * stop one, so the memory cap is what bounds what an abandoned proof holds meanwhile.
 */
export const makeUltraHonkLane = (options: {
  readonly poolSize: number
  readonly crs?: string
  readonly timeout: Duration.Duration
  readonly memoryBytes: number
  readonly files: ArtifactFiles["Type"]
}): ProverLane => {
  const permits = Effect.unsafeMakeSemaphore(options.poolSize)
  const engine = { maxMemoryPages: wasmPages(options.memoryBytes) }
  const crsOf = Effect.suspend(() =>
    options.crs === undefined
      ? Effect.fail(new ProverFailure({ code: "internal", message: "This prover has no UltraHonk CRS (--noir-crs) to prove Noir programs with" }))
      : Effect.succeed({ path: options.crs }))
  /** `f` under a permit and the time limit, with its own time (from the permit on): the proof's `proving_ms`. */
  const run = <A>(what: string, f: () => Promise<A>, invalid: "invalid_inputs" | "internal") =>
    permits.withPermits(1)(Effect.timed(Effect.either(Effect.tryPromise({ try: f, catch: (e) => e }))).pipe(
      Effect.flatMap(([took, result]) =>
        Either.match(result, {
          onLeft: (e) =>
            Effect.fail(
              new ProverFailure({
                code: e instanceof UltraHonkError ? invalid : "internal",
                message: e instanceof Error ? e.message : String(e),
                proving_ms: Duration.toMillis(took)
              })
            ),
          onRight: (value) => Effect.succeed({ value, ms: Duration.toMillis(took) })
        })),
      Effect.timeoutFail({
        duration: options.timeout,
        onTimeout: () => new ProverFailure({ code: "timeout", message: `${what} exceeded ${Duration.format(options.timeout)}` })
      })
    ))
  const prove = (circuit: Circuit, inputs: CircuitInputs): Effect.Effect<ProverOutput, ProverFailure> =>
    Effect.gen(function*() {
      const checked = checkInputs(circuit, inputs)
      if (Either.isLeft(checked)) return yield* new ProverFailure({ code: "invalid_inputs", message: checked.left })
      if (circuit.status !== "ready" || circuit.artifacts === null) {
        return yield* new ProverFailure({ code: "internal", message: `Circuit ${circuit.name} is not ready (${circuit.status})` })
      }
      const crs = yield* crsOf
      const path = yield* options.files.path(circuit.artifacts.wasm)
      const program = yield* Effect.try({
        try: () => JSON.parse(readFileSync(path, "utf8")) as NoirProgram,
        catch: (e) => new ProverFailure({ code: "internal", message: `The program of ${circuit.name} cannot be read: ${String(e)}` })
      })
      const { ms, value: made } = yield* run("Proof generation", () => proveUltraHonk(program, checked.right, crs, engine), "invalid_inputs")
      return { proof: ultraHonkProofRecord(made.proof), public_signals: publicSignalsDecimal(made.publicInputs), proving_ms: ms }
    })
  const verify = (circuit: Circuit, proof: SnarkjsProof, signals: ReadonlyArray<string>): Effect.Effect<boolean, ProverFailure> =>
    Effect.gen(function*() {
      const crs = yield* crsOf
      // A proof or signals not even shaped as UltraHonk's are not a valid proof; a bad key is ours.
      return yield* run("Verification", () => verifyUltraHonkRecord(circuit.verification_key, proof, signals, crs, engine), "internal").pipe(
        Effect.map(({ value }) => value),
        Effect.catchIf((failure) => /^(proof|public_inputs|public_signals)/.test(failure.message), () => Effect.succeed(false))
      )
    })
  return { prove, verify }
}

