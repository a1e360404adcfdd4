// A mid-size benchmark circuit (a chain of 17 Poseidon(2), 4,080 constraints, domain 2^12),
// compiled with the repository's circom2 and keyed by the native development setup, proves random
// inputs with the native prover on one and on several threads; snarkjs verifies every proof, and
// the public output is the chain computed independently by circomlibjs. Skipped where the addon
// is not built, except where CI=true.
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { loadNativeProver, type ZkeyHandle } from "@mzk/prover-native"
import { buildPoseidon, type Poseidon } from "circomlibjs"
import fc from "fast-check"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { pathToFileURL } from "node:url"
import * as snarkjs from "snarkjs"
import { prepareBenchArtifacts } from "../../bench/circuits/artifacts.js"
import { benchCircuit } from "../../bench/circuits/sources.js"
import { FIELD_MODULUS } from "../../src/catalog.js"

const native = loadNativeProver()
if (!native.ok && process.env["CI"] === "true") throw new Error(`CI=true but the native addon did not load: ${native.reason}`)
if (!native.ok) console.warn(`skipped: the native development setup keys this circuit, and the addon did not load (${native.reason})`)

const fromSnarkjs = createRequire(createRequire(import.meta.url).resolve("snarkjs"))
const { WitnessCalculatorBuilder } = (await import(pathToFileURL(join(dirname(fromSnarkjs.resolve("circom_runtime")), "..", "main.js")).href)) as {
  WitnessCalculatorBuilder: (wasm: Uint8Array) => Promise<{ calculateWTNSBin: (inputs: unknown, sanityCheck: number) => Promise<Uint8Array> }>
}

const CIRCUIT = benchCircuit("poseidon", 12)

describe.skipIf(!native.ok)("a 2^12 Poseidon chain on the native prover", () => {
  const cacheDir = mkdtempSync(join(tmpdir(), "mzk-bench-circuit-"))
  let handle: ZkeyHandle
  let vkey: unknown
  let calculator: Awaited<ReturnType<typeof WitnessCalculatorBuilder>>
  let poseidon: Poseidon
  beforeAll(async () => {
    const addon = native.ok ? native.addon : undefined
    const a = await prepareBenchArtifacts(CIRCUIT, { cacheDir, threads: 2 })
    expect(a.constraints).toBe(17 * 240)
    expect(a.constraints + a.nPublic + 1).toBeLessThanOrEqual(2 ** 12)
    handle = addon!.loadZkey(new Uint8Array(readFileSync(a.zkey)), { threads: 2, cache: false })
    expect(addon!.zkeyInfo(handle).domainSize).toBe(2 ** 12)
    vkey = JSON.parse(readFileSync(a.vkey, "utf8"))
    calculator = await WitnessCalculatorBuilder(new Uint8Array(readFileSync(a.wasm)))
    poseidon = await buildPoseidon()
  }, 600_000)
  afterAll(() => rmSync(cacheDir, { recursive: true, force: true }))

  it("proves random inputs, every proof verified by snarkjs, its output the chain's", async () => {
    const addon = native.ok ? native.addon : undefined
    const field = fc.bigInt({ min: 0n, max: FIELD_MODULUS - 1n })
    await fc.assert(
      fc.asyncProperty(field, field, fc.integer({ min: 1, max: 3 }), async (x, k, threads) => {
        const wtns = await calculator.calculateWTNSBin({ in: x.toString(), k: k.toString() }, 0)
        const { proof, publicSignals } = addon!.prove(handle, wtns, { threads })
        let h = x
        for (let i = 0; i < CIRCUIT.units; i++) h = poseidon.F.toObject(poseidon([h, k]))
        expect(publicSignals).toEqual([h.toString()])
        expect(await snarkjs.groth16.verify(vkey, [...publicSignals], proof)).toBe(true)
        // The same proof against another output must not verify.
        expect(await snarkjs.groth16.verify(vkey, [((h + 1n) % FIELD_MODULUS).toString()], proof)).toBe(false)
      }),
      { numRuns: 4 }
    )
  }, 120_000)
})
