// Proofs mzk did not make, made here with snarkjs directly: Groth16 with the built-in multiplier's
// published files, PLONK and FFLONK over a synthetic circuit (r1csFixture) and a fresh powers of tau.
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { createRequire } from "node:module"
import { pathToFileURL } from "node:url"
import { makeCircuit } from "../../../proving/test/fixtures/r1csFixture.js"
import { madeOnceJson } from "../../../proving/test/fixtures/madeOnce.js"
import { makeTestPtau, type SnarkjsInstance, universalInstance } from "../../../proving/test/fixtures/universal.js"

export type Foreign = SnarkjsInstance

interface Snarkjs {
  readonly groth16: { fullProve(input: object, wasm: string, zkey: string): Promise<{ proof: Record<string, unknown>; publicSignals: Array<string> }> }
}
// snarkjs as @mzk/proving has it (this package does not depend on it): the same library, run here as a stranger would.
const fromCircuits = createRequire(fileURLToPath(new URL("../../../proving/package.json", import.meta.url)))
const s = (await import(pathToFileURL(fromCircuits.resolve("snarkjs")).href)) as Snarkjs

const builtin = (file: string) => fileURLToPath(new URL(`../../../proving/build/multiplier/${file}`, import.meta.url))

/** A Groth16 proof of the built-in multiplier (3 × 11), made by snarkjs from its published files. */
export const makeForeignGroth16 = async (): Promise<Foreign> => {
  const g = await s.groth16.fullProve({ a: 3, b: 11 }, builtin("multiplier.wasm"), builtin("multiplier.zkey"))
  return { key: JSON.parse(readFileSync(builtin("verification_key.json"), "utf8")), proof: g.proof, signals: g.publicSignals }
}

/**
 * A proof of each system. `constants: false` makes the PLONK and FFLONK circuit one without
 * constant terms, as `c <== (a + b) * d` is: its PLONK key's Qc is the point at infinity.
 */
export const makeForeignProofs = (options: { readonly constants?: boolean } = {}): Promise<Record<"groth16" | "plonk" | "fflonk", Foreign>> =>
  // Made once per run for each kind: a ptau and two setups are seconds of CPU, and no test needs its own.
  madeOnceJson(`foreign-proofs-${options.constants === false ? "without" : "with"}-constants`, () => makeForeignProofsNow(options))

const makeForeignProofsNow = async (options: { readonly constants?: boolean }): Promise<Record<"groth16" | "plonk" | "fflonk", Foreign>> => {
  const work = mkdtempSync(join(tmpdir(), "mzk-verifications-"))
  try {
    const groth16 = await makeForeignGroth16()
    const ptau = await makeTestPtau(work, 9)
    const circuit = makeCircuit({ nConstraints: 8, nVars: 12, nPublic: 2, ...options })
    return { groth16, plonk: await universalInstance("plonk", ptau, circuit, work), fflonk: await universalInstance("fflonk", ptau, circuit, work) }
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}
