// One proof on many threads (not a test): pnpm exec tsx packages/proving/bench/threads.ts [--rounds N]
//
// For every built-in circuit, one native proof of one witness (computed once) at threads = 1, 2,
// … up to the core count, round-robin across the thread counts so that a shared machine's load
// falls on each alike. Prints the median wall time per thread count and its speed-up over one
// thread: more threads should never make a proof slower.
import { loadNativeProver } from "@mzk/prover-native"
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { availableParallelism } from "node:os"
import { dirname, join } from "node:path"
import { pathToFileURL } from "node:url"
import { BUILTIN_CIRCUITS, buildFilesOf } from "../src/catalog.js"
import { makeCases } from "../test/fixtures/inputs.js"

const fromSnarkjs = createRequire(createRequire(import.meta.url).resolve("snarkjs"))
const { WitnessCalculatorBuilder } = (await import(
  pathToFileURL(join(dirname(fromSnarkjs.resolve("circom_runtime")), "..", "main.js")).href
)) as { WitnessCalculatorBuilder: (wasm: Uint8Array) => Promise<{ calculateWTNSBin: (inputs: unknown, sanityCheck: number) => Promise<Uint8Array> }> }

const native = loadNativeProver()
if (!native.ok) throw new Error(`native prover unavailable: ${native.reason}`)
const addon = native.addon
const roundsArg = process.argv.indexOf("--rounds")
// --smoke (CI's check that the bench runs, scripts/test/benchSmoke.test.ts): the multiplier, one round.
const SMOKE = process.argv.includes("--smoke")
const ROUNDS = SMOKE ? 1 : roundsArg > 0 ? Number(process.argv[roundsArg + 1]) : 31
const cores = availableParallelism()
const counts = [...new Set([1, 2, 4, 8, 16, cores].filter((t) => t <= cores))].sort((a, b) => a - b)
const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

const cases = await makeCases()
console.log(`cores ${cores}, ${ROUNDS} rounds (fewer for merkle_membership), median ms per proof, speed-up over 1 thread`)
console.log(["circuit", ...counts.map((t) => `${t} thread${t > 1 ? "s" : ""}`)].join(" | "))
for (const spec of SMOKE ? BUILTIN_CIRCUITS.filter((c) => c.name === "multiplier") : BUILTIN_CIRCUITS) {
  const files = buildFilesOf(spec.name)
  const calculator = await WitnessCalculatorBuilder(readFileSync(files.wasm))
  const wtns = await calculator.calculateWTNSBin(cases[spec.name]!.inputs, 0)
  const handle = addon.loadZkey(new Uint8Array(readFileSync(files.zkey)), { threads: cores })
  const rounds = spec.name === "merkle_membership" ? Math.ceil(ROUNDS / 3) : ROUNDS
  const times = new Map(counts.map((t) => [t, [] as Array<number>]))
  for (const t of counts) addon.prove(handle, wtns, { threads: t })
  for (let r = 0; r < rounds; r++) {
    for (const t of counts) {
      const start = performance.now()
      addon.prove(handle, wtns, { threads: t })
      times.get(t)!.push(performance.now() - start)
    }
  }
  const one = median(times.get(1)!)
  console.log([spec.name, ...counts.map((t) => {
    const m = median(times.get(t)!)
    return `${m.toFixed(2)} (${(one / m).toFixed(2)}×)`
  })].join(" | "))
}
