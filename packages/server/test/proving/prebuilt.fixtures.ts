// Prebuilt artifacts as a user brings them: a circuit compiled by circom (the wasm and sym it
// writes) and set up by snarkjs's own setups, outside mzk. The circuit's gate takes a sum,
// `c <== (a + b) * d`: PLONK's and FFLONK's setups add a wire for it that the zkey counts and the
// wasm does not compute; it has no constant terms, so its PLONK key's Qc is the point at infinity.
import { Effect } from "effect"
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { SUM_TIMES_SOURCE } from "../../../proving/test/fixtures/mulSource.js"
import { makeTestPtau, snarkjsSetup, type UniversalSystem } from "../../../proving/test/fixtures/universal.js"
import { compileCircom } from "../circuits/circuits.js"


export type SnarkjsSystem = UniversalSystem | "groth16"

export interface SnarkjsPrebuilt {
  readonly wasm: Uint8Array
  readonly sym: Uint8Array
  readonly r1cs: Uint8Array
  readonly zkeys: Readonly<Partial<Record<SnarkjsSystem, Uint8Array>>>
  /** The powers of tau the keys were set up from, prepared for phase 2. */
  readonly ptau: string
}

/**
 * SUM_TIMES_SOURCE compiled, and a zkey of each of `systems` set up in `work` from `ptau` (default: a
 * powers of tau of power 8 made there).
 */
export const snarkjsPrebuilt = async (work: string, systems: ReadonlyArray<SnarkjsSystem>, ptauFile?: string): Promise<SnarkjsPrebuilt> => {
  writeFileSync(join(work, "sum_times.circom"), SUM_TIMES_SOURCE)
  const compiled = await Effect.runPromise(Effect.scoped(Effect.map(compileCircom(join(work, "sum_times.circom")), (c) => {
    // The compile's folder goes with its scope: keep the r1cs for the setups.
    writeFileSync(join(work, "sum_times.r1cs"), c.r1cs)
    return { wasm: c.wasm, sym: c.sym, r1cs: c.r1cs }
  })))
  const ptau = ptauFile ?? await makeTestPtau(work, 8)
  const zkeys: Partial<Record<SnarkjsSystem, Uint8Array>> = {}
  for (const system of systems) {
    await snarkjsSetup(system, join(work, "sum_times.r1cs"), ptau, join(work, `${system}.zkey`))
    zkeys[system] = new Uint8Array(readFileSync(join(work, `${system}.zkey`)))
  }
  return { ...compiled, zkeys, ptau }
}
