// The verification thread: POST /verifications and `mzk verify` verify on a worker thread of
// their own. Through `VerifierLive` (engine snarkjs, and native: Groth16 by the addon there), the
// built-in multiplier's Groth16, PLONK and FFLONK proofs verify, and with a changed signal do not,
// exactly as snarkjs answers on the calling thread; a thread stopped mid-verification fails what it
// held and the next verification starts a new one.
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Verifier } from "@mzk/core"
import { Effect } from "effect"
import { readFileSync } from "node:fs"
import * as snarkjs from "snarkjs"
import { makeVerifier, VERIFIER_MODULES, VerifierLive } from "../../src/verify/index.js"
import { makeVerifyThread } from "../../src/verify/thread.js"

const file = (name: string) => new URL(`../../build/multiplier/${name}`, import.meta.url).pathname
const keyOf = (name: string) => JSON.parse(readFileSync(file(name), "utf8"))

interface Made {
  readonly proof: unknown
  readonly publicSignals: Array<string>
}
const prove = {
  groth16: () => snarkjs.groth16.fullProve({ a: 3, b: 11 }, file("multiplier.wasm"), file("multiplier.zkey")) as Promise<Made>,
  plonk: () => (snarkjs as unknown as { plonk: { fullProve(i: object, w: string, z: string): Promise<Made> } }).plonk.fullProve({ a: 3, b: 11 }, file("multiplier.wasm"), file("multiplier.plonk.zkey")),
  fflonk: () => (snarkjs as unknown as { fflonk: { fullProve(i: object, w: string, z: string): Promise<Made> } }).fflonk.fullProve({ a: 3, b: 11 }, file("multiplier.wasm"), file("multiplier.fflonk.zkey"))
}
const SYSTEMS = [
  ["groth16", "verification_key.json"],
  ["plonk", "verification_key.plonk.json"],
  ["fflonk", "verification_key.fflonk.json"]
] as const

afterAll(async () => {
  await (globalThis as { curve_bn128?: { terminate(): Promise<void> } | null }).curve_bn128?.terminate()
})

describe("the verification thread", () => {
  for (const engine of ["snarkjs", "native"] as const) {
    it.live(`VerifierLive (engine ${engine}) verifies each system's proof on its thread as snarkjs does on the calling thread`, () =>
      Effect.gen(function*() {
        const here = makeVerifier(VERIFIER_MODULES)
        const verifier = yield* Verifier
        for (const [system, keyFile] of SYSTEMS) {
          const key = keyOf(keyFile)
          const { proof, publicSignals } = yield* Effect.promise(prove[system])
          const changed = [String(BigInt(publicSignals[0]!) + 1n), ...publicSignals.slice(1)]
          for (const [signals, valid] of [[publicSignals, true], [changed, false]] as const) {
            expect(yield* Effect.flatten(verifier.prepare(system, key, proof, signals))).toBe(valid)
            expect(yield* Effect.flatten(here.prepare(system, key, proof, signals))).toBe(valid)
          }
        }
      }).pipe(Effect.provide(VerifierLive({ engine }))), 180_000)
  }

  it("a thread stopped mid-verification fails what it held; the next verification starts a new one", async () => {
    const thread = makeVerifyThread({ native: false })
    const key = keyOf("verification_key.plonk.json")
    const { proof, publicSignals } = await prove.plonk()
    expect(await thread.verify("plonk", key, publicSignals, proof)).toEqual({ valid: true, by: "snarkjs" })
    const held = thread.verify("plonk", key, publicSignals, proof)
    await thread.close()
    await expect(held).rejects.toThrow(/verification thread stopped/)
    expect(await thread.verify("plonk", key, publicSignals, proof)).toEqual({ valid: true, by: "snarkjs" })
    // What snarkjs throws on comes back as an error, not as an answer.
    await expect(thread.verify("plonk", { ...key, curve: "no such curve" }, publicSignals, proof)).rejects.toThrow()
    await thread.close()
  }, 120_000)
})
