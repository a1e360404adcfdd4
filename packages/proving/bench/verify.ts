// Verification benchmark (not a test): pnpm bench packages/proving/bench/verify.ts [--quick]
//
// What it costs that the proof worker verifies every proof before it reports it completed, on the
// built-in circuits multiplier, range and merkle_membership:
//   1. One thread, alternating proof by proof: a native proof (threads 1, the pool's default on a
//      busy machine), snarkjs's groth16.verify of it on a warm single-threaded bn128 curve, and the
//      native verifyGroth16 of it (a key prepared once), as a pool thread verifies. Median wall ms of
//      each and the CPU ms each used in all, and verify as a share of prove + verify, with each.
//   2. Through the pool (ProverPoolLive, one thread, the default engine), as the worker calls it:
//      prover.prove then prover.verify, proof by proof: median wall ms of each.
//   3. One thread, keys with more public signals (1 to 64; valid proofs made from random scalars
//      with ffjavascript's curve): snarkjs verify and native verify, CPU ms per proof.
// Without the native addon, sections 1 and 3 are left out and the pool proves with snarkjs.
import { ArtifactsRepo, Prover } from "@mzk/core"
import { loadNativeProver } from "@mzk/prover-native"
import { Effect, Layer } from "effect"
import { artifactsInMap } from "@mzk/testkit"
import { readFileSync } from "node:fs"
import * as snarkjs from "snarkjs"
import { ArtifactFilesLive } from "../src/artifacts/files.js"
import { BUILTIN_CIRCUITS, buildFilesOf } from "../src/catalog.js"
import { ProverPoolLive } from "../src/prove/pool.js"
import { snarkjsDependency } from "../src/snarkjsDeps.mjs"
import { makeCases } from "../test/fixtures/inputs.js"

// --smoke (CI's check that the bench runs, scripts/test/benchSmoke.test.ts): the multiplier, one proof per row, one public signal in section 3.
const SMOKE = process.argv.includes("--smoke")
const quick = process.argv.includes("--quick")
const CIRCUITS = SMOKE ? ["multiplier"] as const : ["multiplier", "range", "merkle_membership"] as const
const runsOf = (circuit: string) => (SMOKE ? 1 : circuit === "merkle_membership" ? (quick ? 5 : 15) : quick ? 10 : 41)

const { WitnessCalculatorBuilder } = (await snarkjsDependency("circom_runtime")) as {
  WitnessCalculatorBuilder: (wasm: Uint8Array) => Promise<{ calculateWTNSBin: (inputs: unknown, sanityCheck: number) => Promise<Uint8Array> }>
}
// ffjavascript's curve, as far as section 3 uses it (elements are its Montgomery buffers).
type Element = Uint8Array
interface Bn128 {
  terminate(): Promise<void>
  Fr: {
    random(): Element
    e(n: number | bigint): Element
    add(a: Element, b: Element): Element
    sub(a: Element, b: Element): Element
    mul(a: Element, b: Element): Element
    div(a: Element, b: Element): Element
    toObject(a: Element): bigint
  }
  G1: { g: Element; timesFr(p: Element, k: Element): Element; toObject(p: Element): Array<bigint>; toAffine(p: Element): Element }
  G2: { g: Element; timesFr(p: Element, k: Element): Element; toObject(p: Element): Array<Array<bigint>>; toAffine(p: Element): Element }
}
const { buildBn128 } = (await snarkjsDependency("ffjavascript")) as { buildBn128: (singleThread: boolean) => Promise<Bn128> }
const globals = globalThis as { curve_bn128?: Bn128 | null }

const native = loadNativeProver()
if (!native.ok) console.warn(`native prover unavailable (${native.reason}): section 1 is left out, the pool proves with snarkjs`)
const addon = native.ok ? native.addon : undefined

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const cpuMs = () => {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1000
}
const ms = (x: number) => (x < 10 ? x.toFixed(2) : x.toFixed(1))

const cases = await makeCases()
const vkeyOf = (circuit: string) => JSON.parse(readFileSync(buildFilesOf(circuit).vkey, "utf8")) as unknown

// 1. One thread: native prove, snarkjs verify, alternating.
if (addon !== undefined) {
  globals.curve_bn128 = await buildBn128(true)
  console.log("\n1. One thread, alternating: native prove (threads 1) / snarkjs verify (warm single-threaded curve) / native verify")
  console.log(
    "| circuit | proofs | prove ms (median) | snarkjs verify ms (median) | native verify ms (median) | prove CPU ms | " +
      "snarkjs verify CPU ms | native verify CPU ms | verify share of CPU: snarkjs → native |"
  )
  console.log("|---|---|---|---|---|---|---|---|---|")
  for (const circuit of CIRCUITS) {
    const calculator = await WitnessCalculatorBuilder(readFileSync(buildFilesOf(circuit).wasm))
    const wtns = await calculator.calculateWTNSBin(cases[circuit]!.inputs, 0)
    const handle = addon.loadZkey(new Uint8Array(readFileSync(buildFilesOf(circuit).zkey)), { threads: 2, cache: false })
    const vkey = vkeyOf(circuit)
    const key = addon.prepareVerifyingKey(vkey as never)
    for (let i = 0; i < 3; i++) {
      const out = addon.prove(handle, wtns)
      if (!(await snarkjs.groth16.verify(vkey, out.publicSignals, out.proof))) throw new Error(`${circuit}: a proof did not verify`)
      if (!addon.verifyGroth16(key, out.proof, out.publicSignals)) throw new Error(`${circuit}: a proof did not verify natively`)
    }
    const prove: Array<number> = []
    const verify: Array<number> = []
    const verifyNative: Array<number> = []
    let proveCpu = 0
    let verifyCpu = 0
    let verifyNativeCpu = 0
    for (let i = 0; i < runsOf(circuit); i++) {
      let c = cpuMs()
      let t = performance.now()
      const out = addon.prove(handle, wtns)
      prove.push(performance.now() - t)
      proveCpu += cpuMs() - c
      c = cpuMs()
      t = performance.now()
      const valid = await snarkjs.groth16.verify(vkey, out.publicSignals, out.proof)
      verify.push(performance.now() - t)
      verifyCpu += cpuMs() - c
      c = cpuMs()
      t = performance.now()
      const validNative = addon.verifyGroth16(key, out.proof, out.publicSignals)
      verifyNative.push(performance.now() - t)
      verifyNativeCpu += cpuMs() - c
      if (!valid || !validNative) throw new Error(`${circuit}: a proof did not verify`)
    }
    addon.unloadZkey(handle)
    const n = prove.length
    const share = (v: number) => `${((100 * v) / (proveCpu + v)).toFixed(0)}%`
    console.log(
      `| ${circuit} | ${n} | ${ms(median(prove))} | ${ms(median(verify))} | ${ms(median(verifyNative))} | ${ms(proveCpu / n)} | ` +
        `${ms(verifyCpu / n)} | ${ms(verifyNativeCpu / n)} | ${share(verifyCpu)} → ${share(verifyNativeCpu)} |`
    )
  }

  // 3. Keys with more public signals: Groth16's equation e(A, B) = e(α, β)·e(vk_x, γ)·e(C, δ) holds
  // for A = a·G1, B = b·G2, … when a·b = α·β + x·γ + c·δ, so C's scalar is solved for.
  const curve = globals.curve_bn128!
  const { Fr, G1, G2 } = curve
  const str = (xs: ReadonlyArray<unknown>): unknown => xs.map((x) => (Array.isArray(x) ? str(x) : String(x)))
  const g1 = (k: Element) => str(G1.toObject(G1.toAffine(G1.timesFr(G1.g, k))))
  const g2 = (k: Element) => str(G2.toObject(G2.toAffine(G2.timesFr(G2.g, k))))
  console.log("\n3. One thread, more public signals (synthetic keys, valid proofs): CPU ms per proof")
  console.log("| public signals | proofs | snarkjs verify CPU ms | native verify CPU ms | native prepareVerifyingKey CPU ms |")
  console.log("|---|---|---|---|---|")
  for (const nPublic of SMOKE ? [1] : [1, 4, 16, 64]) {
    const [alpha, beta, gamma, delta] = [Fr.random(), Fr.random(), Fr.random(), Fr.random()]
    const ic = Array.from({ length: nPublic + 1 }, () => Fr.random())
    const vkey = {
      protocol: "groth16", curve: "bn128", nPublic,
      vk_alpha_1: g1(alpha), vk_beta_2: g2(beta), vk_gamma_2: g2(gamma), vk_delta_2: g2(delta), IC: ic.map(g1)
    }
    let t = cpuMs()
    const key = addon.prepareVerifyingKey(vkey as never)
    const prepareMs = cpuMs() - t
    const snarkjsMs: Array<number> = []
    const nativeMs: Array<number> = []
    const proofs = SMOKE ? 1 : quick ? 5 : 15
    for (let i = 0; i < proofs + 2; i++) {
      const signals = Array.from({ length: nPublic }, () => Fr.random())
      const x = signals.reduce((acc, s, j) => Fr.add(acc, Fr.mul(s, ic[j + 1]!)), ic[0]!)
      const [a, b] = [Fr.random(), Fr.random()]
      const c = Fr.div(Fr.sub(Fr.sub(Fr.mul(a, b), Fr.mul(alpha, beta)), Fr.mul(x, gamma)), delta)
      const proof = { pi_a: g1(a), pi_b: g2(b), pi_c: g1(c), protocol: "groth16", curve: "bn128" }
      const publicSignals = signals.map((s) => Fr.toObject(s).toString())
      t = cpuMs()
      const valid = await snarkjs.groth16.verify(vkey, publicSignals, proof as never)
      const s = cpuMs() - t
      t = cpuMs()
      const validNative = addon.verifyGroth16(key, proof as never, publicSignals)
      const n = cpuMs() - t
      if (!valid || !validNative) throw new Error(`${nPublic} signals: a synthetic proof did not verify`)
      if (i >= 2) {
        snarkjsMs.push(s)
        nativeMs.push(n)
      }
    }
    const mean = (xs: ReadonlyArray<number>) => xs.reduce((a, b) => a + b, 0) / xs.length
    console.log(`| ${nPublic} | ${proofs} | ${ms(mean(snarkjsMs))} | ${ms(mean(nativeMs))} | ${ms(prepareMs)} |`)
  }
  await globals.curve_bn128?.terminate()
  globals.curve_bn128 = null
}

// 2. Through the pool, as the proof worker calls it.
await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
  const prover = yield* Prover
  console.log(`\n2. Through the pool (one thread, ${addon === undefined ? "snarkjs" : "native"} engine): prover.prove then prover.verify`)
  console.log("| circuit | proofs | prove ms (median) | verify ms (median) | verify share of the two |")
  console.log("|---|---|---|---|---|")
  for (const name of CIRCUITS) {
    const circuit = BUILTIN_CIRCUITS.find((c) => c.name === name)!
    const { inputs } = cases[name]!
    const prove: Array<number> = []
    const verify: Array<number> = []
    for (let i = 0; i < runsOf(name) + 3; i++) {
      let t = performance.now()
      const out = yield* prover.prove(circuit, inputs)
      const p = performance.now() - t
      t = performance.now()
      const valid = yield* prover.verify(circuit, out.proof, out.public_signals)
      const v = performance.now() - t
      if (!valid) throw new Error(`${name}: a proof did not verify`)
      // The first three warm the thread's JIT.
      if (i >= 3) {
        prove.push(p)
        verify.push(v)
      }
    }
    const share = (100 * verify.reduce((s, x) => s + x, 0)) / [...prove, ...verify].reduce((s, x) => s + x, 0)
    console.log(`| ${name} | ${prove.length} | ${ms(median(prove))} | ${ms(median(verify))} | ${share.toFixed(0)}% |`)
  }
}).pipe(Effect.provide(ProverPoolLive({ poolSize: 1, priority: "normal", preload: [...CIRCUITS] }).pipe(
  // Built-in circuits only: their files are the build, so no artifact store is needed.
  Layer.provide(ArtifactFilesLive()),
  Layer.provide(Layer.succeed(ArtifactsRepo, artifactsInMap()))
)))))
