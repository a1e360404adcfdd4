import type { NativeLoad } from "@mzk/prover-native"
import { Config, Either } from "effect"

/**
 * Which Groth16 prover runs in the pool: `native` (@mzk/prover-native, C++), `snarkjs`
 * (WebAssembly), or `auto`: native when its addon loaded, snarkjs otherwise. Witnesses are always
 * computed by the circuits' own (circom) WebAssembly.
 */
export type ProverEngine = "auto" | "native" | "snarkjs"

/** The engine chosen for a pool, and the sentence that says why (logged at start). */
export interface EngineChoice {
  readonly engine: "native" | "snarkjs"
  readonly kernel?: string
  readonly why: string
}

/**
 * Resolves the requested engine against what loaded: `native` without the addon is an error,
 * `auto` falls back to snarkjs with the reason.
 */
export const chooseEngine = (requested: ProverEngine, native: NativeLoad): Either.Either<EngineChoice, string> => {
  if (requested === "snarkjs") return Either.right({ engine: "snarkjs", why: "requested" })
  if (native.ok) return Either.right({ engine: "native", kernel: native.addon.kernel, why: requested === "native" ? "requested" : "addon loaded" })
  if (requested === "native") return Either.left(`The native prover was requested but is unavailable: ${native.reason}`)
  return Either.right({ engine: "snarkjs", why: `native prover unavailable: ${native.reason}` })
}

/** MZK_PROVER_ENGINE, read through Effect's Config (the environment by default). */
export const ProverEngineConfig: Config.Config<ProverEngine> = Config.literal("auto", "native", "snarkjs")("MZK_PROVER_ENGINE").pipe(
  Config.withDefault<ProverEngine>("auto")
)
