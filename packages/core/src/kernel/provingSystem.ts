import { Schema } from "effect"

/**
 * The proof system a circuit is set up for and its proofs are made with. Groth16 needs a
 * per-circuit phase-2 ceremony; PLONK and FFLONK need only the universal powers of tau; UltraHonk
 * proves Noir programs with Barretenberg. A circuit has exactly one; its proofs carry the same.
 */
export const PROVING_SYSTEMS = ["groth16", "plonk", "fflonk", "ultra_honk"] as const
export const ProvingSystem = Schema.Literal(...PROVING_SYSTEMS).annotations({
  identifier: "ProvingSystem",
  description: "`groth16` (default: smallest proof, per-circuit ceremony), `plonk` and `fflonk` (universal setup, " +
    "no ceremony per circuit), `ultra_honk` (Noir programs, proven with Barretenberg)"
})
export type ProvingSystem = typeof ProvingSystem.Type
export const DEFAULT_PROVING_SYSTEM: ProvingSystem = "groth16"
