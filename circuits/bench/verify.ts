// Verification benchmark (not a test): pnpm bench circuits/bench/verify.ts [--quick]
//
// What it costs that the proof worker verifies every proof before it reports it completed, on the
// built-in circuits multiplier, range and merkle_membership:
//   1. One thread, alternating proof by proof: a native proof (threads 1, the pool's default on a
//      busy machine) and snarkjs's groth16.verify of it on a warm single-threaded bn128 curve, as a
//      pool thread verifies. Median wall ms of each and the CPU ms each used in all, and verify as a
//      share of prove + verify.
//   2. Through the pool (Groth16ProverLive, one thread, the default engine), as the worker calls it:
//      prover.prove then prover.verify, proof by proof: median wall ms of each.
// Without the native addon, section 1 is left out and the pool proves with snarkjs.
import { ArtifactsRepo, Prover } from "@mzk/core"
import { loadNativeProver } from "@mzk/prover-native"
import { Effect, Layer, Option } from "effect"
import { readFileSync } from "node:fs"
import * as snarkjs from "snarkjs"
import { ArtifactFilesLive } from "../src/artifacts/files.js"
import { BUILTIN_CIRCUITS, buildFilesOf } from "../src/catalog.js"
import { Groth16ProverLive } from "../src/prover.js"
import { snarkjsDependency } from "../src/snarkjsDeps.mjs"
import { makeCases } from "../test/fixtures/inputs.js"

const quick = process.argv.includes("--quick")
const CIRCUITS = ["multiplier", "range", "merkle_membership"] as const
const runsOf = (circuit: string) => (circuit === "merkle_membership" ? (quick ? 5 : 15) : quick ? 10 : 41)

const { WitnessCalculatorBuilder } = (await snarkjsDependency("circom_runtime")) as {
  WitnessCalculatorBuilder: (wasm: Uint8Array) => Promise<{ calculateWTNSBin: (inputs: unknown, sanityCheck: number) => Promise<Uint8Array> }>
}
const { buildBn128 } = (await snarkjsDependency("ffjavascript")) as { buildBn128: (singleThread: boolean) => Promise<{ terminate(): Promise<void> }> }
const globals = globalThis as { curve_bn128?: { terminate(): Promise<void> } | null }

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
  console.log("\n1. One thread, alternating: native prove (threads 1) / snarkjs verify (warm single-threaded curve)")
  console.log("| circuit | proofs | prove ms (median) | verify ms (median) | prove CPU ms | verify CPU ms | verify share of CPU |")
  console.log("|---|---|---|---|---|---|---|")
  for (const circuit of CIRCUITS) {
    const calculator = await WitnessCalculatorBuilder(readFileSync(buildFilesOf(circuit).wasm))
    const wtns = await calculator.calculateWTNSBin(cases[circuit]!.inputs, 0)
    const handle = addon.loadZkey(new Uint8Array(readFileSync(buildFilesOf(circuit).zkey)), { threads: 2, cache: false })
    const vkey = vkeyOf(circuit)
    for (let i = 0; i < 3; i++) {
      const out = addon.prove(handle, wtns)
      if (!(await snarkjs.groth16.verify(vkey, out.publicSignals, out.proof))) throw new Error(`${circuit}: a proof did not verify`)
    }
    const prove: Array<number> = []
    const verify: Array<number> = []
    let proveCpu = 0
    let verifyCpu = 0
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
      if (!valid) throw new Error(`${circuit}: a proof did not verify`)
    }
    addon.unloadZkey(handle)
    const n = prove.length
    console.log(
      `| ${circuit} | ${n} | ${ms(median(prove))} | ${ms(median(verify))} | ${ms(proveCpu / n)} | ${ms(verifyCpu / n)} | ` +
        `${((100 * verifyCpu) / (proveCpu + verifyCpu)).toFixed(0)}% |`
    )
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
}).pipe(Effect.provide(Groth16ProverLive({ poolSize: 1, priority: "normal", preload: [...CIRCUITS] }).pipe(
  // Built-in circuits only: their files are the build, so no artifact store is needed.
  Layer.provide(ArtifactFilesLive()),
  Layer.provide(Layer.succeed(ArtifactsRepo, {
    put: () => Effect.dieMessage("unused"),
    get: () => Effect.succeed(Option.none()),
    size: () => Effect.succeed(Option.none())
  }))
)))))
