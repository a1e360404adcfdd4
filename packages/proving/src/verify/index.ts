import { type ProvingSystem, unsupported, Verifier, VerifierInputInvalid } from "@mzk/core"
import { Effect, Layer } from "effect"
import * as snarkjs from "snarkjs"
import { type PointCheck, pointChecks } from "../build/zkeyPoints.mjs"
import { type ProverEngine, ProverEngineConfig } from "../prove/engine.js"
import { fflonkModule } from "./fflonk.js"
import { JsonReader } from "./fields.js"
import { groth16 } from "./groth16.js"
import { plonkModule } from "./plonk.js"
import type { SystemModule } from "./system.js"
import { makeVerifyThread, onThread, type VerifyThread } from "./thread.js"
import { ultraHonkModule } from "./ultraHonk.js"

export { ultraHonkModule }

/** The systems verified here with snarkjs, one module each. */
export const VERIFIER_MODULES: ReadonlyArray<SystemModule> = [groth16, plonkModule, fflonkModule]

export interface VerifierOptions {
  /**
   * The prover's engine, which Groth16's verification follows: natively unless `snarkjs` is asked
   * for or the addon does not load (then snarkjs). Default: MZK_PROVER_ENGINE, else `auto`.
   */
  readonly engine?: ProverEngine | undefined
  /** An UltraHonk CRS (`bb.js`): with it, UltraHonk is verified too. */
  readonly noirCrs?: string | undefined
}

/**
 * The modules a verifier dispatches to: Groth16, PLONK and FFLONK verified on `thread` (which
 * verifies Groth16 natively where it was started to), UltraHonk (bb.js, its own threads) where a
 * CRS is given.
 */
export const verifierModules = (thread: VerifyThread, noirCrs?: string): ReadonlyArray<SystemModule> => [
  ...VERIFIER_MODULES.map((module) => onThread(module, thread)),
  ...(noirCrs === undefined ? [] : [ultraHonkModule({ path: noirCrs })])
]

interface Bn128 {
  readonly G1: { fromObject(point: ReadonlyArray<bigint>): Uint8Array }
  readonly G2: { fromObject(point: ReadonlyArray<ReadonlyArray<bigint>>): Uint8Array }
  terminate(): Promise<void>
}
interface CurveChecks {
  readonly curve: Bn128
  readonly key: { readonly g1Problem: PointCheck; readonly g2Problem: PointCheck }
  readonly proof: { readonly g1Problem: PointCheck; readonly g2Problem: PointCheck }
}

const { curves } = snarkjs as unknown as { readonly curves: { getCurveFromName(name: "bn128"): Promise<Bn128> } }

/**
 * Stops the worker threads of snarkjs's shared bn128 curve, which keep a process alive: for a
 * process that verified and is done (`mzk verify`), never for a server, which keeps verifying.
 */
export const releaseVerifierThreads = async (): Promise<void> => {
  const curve = await curves.getCurveFromName("bn128")
  await curve.terminate()
}

/**
 * The `Verifier` over these modules: per request, the system's module reads key, proof and signals
 * field by field; only when all are well formed are their points put on ffjavascript's curve and
 * checked (on the curve, G2 in its subgroup: `pointChecks`, shared with uploaded zkeys); only
 * then does the module verify (snarkjs on the calling thread, or `VerifierLive`'s thread):
 * docs/performance.md, "Verifying proofs made elsewhere".
 */
export const makeVerifier = (modules: ReadonlyArray<SystemModule> = VERIFIER_MODULES): Verifier["Type"] => {
  const bySystem = new Map(modules.map((module) => [module.system, module]))
  const systems = modules.map((module) => module.system)
  let loaded: Promise<CurveChecks> | undefined
  const curveChecks = () =>
    loaded ??= curves.getCurveFromName("bn128").then((curve) => ({ curve, key: pointChecks(curve, "key"), proof: pointChecks(curve, "proof") }))

  const moduleOf = (system: ProvingSystem) => {
    const module = bySystem.get(system)
    return module === undefined ? Effect.fail(unsupported(system, systems)) : Effect.succeed(module)
  }

  /** Fails with every problem noted so far; else the points checked, then with those problems. */
  const settle = (reader: JsonReader) =>
    Effect.gen(function*() {
      if (reader.problems.length > 0) return yield* new VerifierInputInvalid({ details: reader.problems })
      const { curve, key, proof } = yield* Effect.promise(curveChecks)
      for (const point of reader.points) {
        const checks = point.path.startsWith("proof") ? proof : key
        const problem = point.group === "G1"
          ? checks.g1Problem(curve.G1.fromObject(point.value.map(BigInt)))
          : checks.g2Problem(curve.G2.fromObject(point.value.map((pair) => pair.map(BigInt))))
        if (problem !== undefined) reader.problem(point.path, problem)
      }
      if (reader.problems.length > 0) return yield* new VerifierInputInvalid({ details: reader.problems })
    })

  const checkKey = (system: ProvingSystem, key: unknown) =>
    Effect.gen(function*() {
      const module = yield* moduleOf(system)
      const reader = new JsonReader()
      const nPublic = module.readKey(reader, key)
      yield* settle(reader)
      return { n_public: nPublic! }
    })

  const prepare = (system: ProvingSystem, key: unknown, proof: unknown, publicSignals: ReadonlyArray<string>) =>
    Effect.gen(function*() {
      const module = yield* moduleOf(system)
      const reader = new JsonReader()
      const nPublic = module.readKey(reader, key)
      module.readProof(reader, proof)
      if (nPublic !== undefined) reader.signals(publicSignals, nPublic)
      yield* settle(reader)
      const verified = module.equivalentProof?.(proof) ?? proof
      // Inputs that passed every check and still make snarkjs throw prove nothing: not valid.
      return Effect.tryPromise(() => module.verify(key, publicSignals, verified)).pipe(
        Effect.catchAll((error) => Effect.as(Effect.logWarning(`${system} verification threw on checked inputs: ${String(error)}`), false))
      )
    })

  return { systems, checkKey, prepare }
}

/**
 * The `Verifier` for the composition root: verification runs on a thread of its own (stopped
 * with the layer), Groth16 natively there unless the engine is snarkjs. A bad MZK_PROVER_ENGINE is the
 * prover's to report (it refuses to start); verification then follows `auto`.
 */
export const VerifierLive = (options: VerifierOptions = {}): Layer.Layer<Verifier> =>
  Layer.scoped(
    Verifier,
    Effect.gen(function*() {
      const engine = options.engine ?? (yield* ProverEngineConfig.pipe(Effect.orElseSucceed((): ProverEngine => "auto")))
      const thread = yield* Effect.acquireRelease(
        Effect.sync(() => makeVerifyThread({ native: engine !== "snarkjs" })),
        (thread) => Effect.promise(thread.close)
      )
      return makeVerifier(verifierModules(thread, options.noirCrs))
    })
  )
