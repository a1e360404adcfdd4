// Verification of proofs made elsewhere (POST /verifications, mzk verify), not a test:
//   pnpm bench packages/proving/bench/verifications.ts [--runs N]
//
// The built-in multiplier's Groth16, PLONK and FFLONK proofs (made here by snarkjs), each verified
// N times in a row (after N warm-up calls) by the whole `Verifier.prepare` a request runs (every
// field read, every point checked, then the verification), three ways: snarkjs on the calling
// thread (`makeVerifier(VERIFIER_MODULES)`), `VerifierLive` with engine snarkjs (snarkjs on the
// verification thread), and `VerifierLive` with engine native (Groth16 by the addon, the others
// on the thread). Printed per system and way: the median wall ms of a verification, and the main
// thread's busy time per verification (perf_hooks' event-loop utilization: the event loop's active
// ms over the timed calls, divided by their count), which is what every other request waits on.
import { Verifier } from "@mzk/core"
import { Effect, Layer } from "effect"
import { readFileSync } from "node:fs"
import { performance } from "node:perf_hooks"
import * as snarkjs from "snarkjs"
import { makeVerifier, VERIFIER_MODULES, VerifierLive } from "../src/verify/index.js"

const runsAt = process.argv.indexOf("--runs")
// --smoke (CI's check that the bench runs, scripts/test/benchSmoke.test.ts): one verification per row.
const runs = process.argv.includes("--smoke") ? 1 : runsAt > 0 ? Number(process.argv[runsAt + 1]) : 15
const file = (name: string) => new URL(`../build/multiplier/${name}`, import.meta.url).pathname

interface Made {
  readonly proof: unknown
  readonly publicSignals: Array<string>
}
type FullProve = (inputs: object, wasm: string, zkey: string) => Promise<Made>
const systems = snarkjs as unknown as Record<"groth16" | "plonk" | "fflonk", { fullProve: FullProve }>
const CASES = [
  ["groth16", "multiplier.zkey", "verification_key.json"],
  ["plonk", "multiplier.plonk.zkey", "verification_key.plonk.json"],
  ["fflonk", "multiplier.fflonk.zkey", "verification_key.fflonk.json"]
] as const

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

const measure = (verifier: Verifier["Type"], system: (typeof CASES)[number][0], key: unknown, made: Made) =>
  Effect.gen(function*() {
    const once = Effect.flatten(verifier.prepare(system, key, made.proof, made.publicSignals))
    for (let i = 0; i < runs; i++) if (!(yield* once)) throw new Error(`${system}: the proof did not verify`)
    const before = performance.eventLoopUtilization()
    const wall: Array<number> = []
    for (let i = 0; i < runs; i++) {
      const start = performance.now()
      yield* once
      wall.push(performance.now() - start)
    }
    const busy = performance.eventLoopUtilization(before).active / runs
    return { wall: median(wall), busy }
  })

const ways: ReadonlyArray<readonly [string, Layer.Layer<Verifier>]> = [
  ["snarkjs, calling thread", Layer.sync(Verifier, () => makeVerifier(VERIFIER_MODULES))],
  ["VerifierLive, engine snarkjs", VerifierLive({ engine: "snarkjs" })],
  ["VerifierLive, engine native", VerifierLive({ engine: "native" })]
]

const made = await Promise.all(CASES.map(([system, zkey]) => systems[system].fullProve({ a: 3, b: 11 }, file("multiplier.wasm"), file(zkey))))
console.log(`${runs} verifications per row after ${runs} warm-up calls; ms`)
console.log("| system | verified by | p50 wall per verification | main thread busy per verification |")
console.log("|---|---|---|---|")
for (const [i, [system, , keyFile]] of CASES.entries()) {
  const key = JSON.parse(readFileSync(file(keyFile), "utf8"))
  for (const [way, layer] of ways) {
    const { busy, wall } = await Effect.runPromise(Effect.flatMap(Verifier, (verifier) => measure(verifier, system, key, made[i]!)).pipe(Effect.provide(layer)))
    console.log(`| ${system} | ${way} | ${wall.toFixed(1)} | ${busy.toFixed(1)} |`)
  }
}
await (globalThis as { curve_bn128?: { terminate(): Promise<void> } | null }).curve_bn128?.terminate()
// Worker threads started above (snarkjs's curves, the verification threads) can outlive their
// layers and would keep the process alive after the table.
process.exit(0)
