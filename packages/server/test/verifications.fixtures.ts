// Proofs mzk did not make, made here with snarkjs directly: Groth16 with the built-in multiplier's
// published files, PLONK and FFLONK over a synthetic circuit (r1csFixture) and a fresh powers of tau.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { createRequire } from "node:module"
import { pathToFileURL } from "node:url"
import { makeCircuit } from "../../../circuits/test/fixtures/r1csFixture.js"

export interface Foreign {
  readonly key: Record<string, unknown>
  readonly proof: Record<string, unknown>
  readonly signals: Array<string>
}

interface Snarkjs {
  readonly curves: { getCurveFromName(name: "bn128"): Promise<unknown> }
  readonly powersOfTau: {
    newAccumulator(curve: unknown, power: number, file: string): Promise<unknown>
    contribute(from: string, to: string, name: string, entropy: string): Promise<unknown>
    preparePhase2(from: string, to: string): Promise<unknown>
  }
  readonly zKey: { exportVerificationKey(zkey: string): Promise<Record<string, unknown>> }
  readonly groth16: { fullProve(input: object, wasm: string, zkey: string): Promise<{ proof: Record<string, unknown>; publicSignals: Array<string> }> }
  readonly plonk: {
    setup(r1cs: string, ptau: string, zkey: string): Promise<unknown>
    prove(zkey: string, wtns: string): Promise<{ proof: Record<string, unknown>; publicSignals: Array<string> }>
  }
  readonly fflonk: {
    setup(r1cs: string, ptau: string, zkey: string): Promise<unknown>
    prove(zkey: string, wtns: string): Promise<{ proof: Record<string, unknown>; publicSignals: Array<string> }>
  }
}
// snarkjs as @mzk/circuits has it (this package does not depend on it): the same library, run here as a stranger would.
const fromCircuits = createRequire(fileURLToPath(new URL("../../../circuits/package.json", import.meta.url)))
const s = (await import(pathToFileURL(fromCircuits.resolve("snarkjs")).href)) as Snarkjs

const builtin = (file: string) => fileURLToPath(new URL(`../../../circuits/build/multiplier/${file}`, import.meta.url))

export const makeForeignProofs = async (): Promise<Record<"groth16" | "plonk" | "fflonk", Foreign>> => {
  const work = mkdtempSync(join(tmpdir(), "mzk-verifications-"))
  try {
    const g = await s.groth16.fullProve({ a: 3, b: 11 }, builtin("multiplier.wasm"), builtin("multiplier.zkey"))
    const groth16 = { key: JSON.parse(readFileSync(builtin("verification_key.json"), "utf8")), proof: g.proof, signals: g.publicSignals }

    const curve = await s.curves.getCurveFromName("bn128")
    await s.powersOfTau.newAccumulator(curve, 9, join(work, "p0.ptau"))
    await s.powersOfTau.contribute(join(work, "p0.ptau"), join(work, "p1.ptau"), "test", "verifications test entropy")
    await s.powersOfTau.preparePhase2(join(work, "p1.ptau"), join(work, "final.ptau"))
    const circuit = makeCircuit({ nConstraints: 8, nVars: 12, nPublic: 2 })
    writeFileSync(join(work, "c.r1cs"), circuit.r1cs)
    writeFileSync(join(work, "c.wtns"), circuit.wtns)
    const universal = async (system: "plonk" | "fflonk"): Promise<Foreign> => {
      const zkey = join(work, `${system}.zkey`)
      await s[system].setup(join(work, "c.r1cs"), join(work, "final.ptau"), zkey)
      const made = await s[system].prove(zkey, join(work, "c.wtns"))
      return { key: await s.zKey.exportVerificationKey(zkey), proof: made.proof, signals: made.publicSignals }
    }
    return { groth16, plonk: await universal("plonk"), fflonk: await universal("fflonk") }
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}
