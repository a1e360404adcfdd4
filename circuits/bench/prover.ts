// Prover benchmark (not a test): pnpm exec tsx circuits/bench/prover.ts [--quick]
//
// For every circuit, side by side in one run:
//   (a) mzk's Prover pool (SnarkjsProverLive, pool size = core count): latency of one proof at a
//       time, and throughput with the pool kept full;
//   (b) a warmed in-process snarkjs loop, one proof after the other, with everything a loop can
//       keep kept (witness calculator compiled once, zkey in memory, snarkjs's multi-threaded
//       curve loaded): the engine's own limit on this machine;
//   (c) `snarkjs groth16 fullprove` run per proof from the command line (node_modules/.bin/snarkjs).
// Counts and time are bounded: a few proofs for merkle_membership and for the CLI.
import { Prover } from "@mzk/core"
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { availableParallelism, tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import * as snarkjs from "snarkjs"
import { artifactsOf, CIRCUIT_SPECS } from "../src/catalog.js"
import { SnarkjsProverLive } from "../src/prover.js"
import { makeCases } from "../test/fixtures/inputs.js"

// snarkjs's own witness calculator builder, as the prover threads load it.
const fromSnarkjs = createRequire(createRequire(import.meta.url).resolve("snarkjs"))
const { WitnessCalculatorBuilder } = (await import(
  pathToFileURL(join(dirname(fromSnarkjs.resolve("circom_runtime")), "..", "main.js")).href
)) as {
  WitnessCalculatorBuilder: (wasm: Uint8Array) => Promise<{ calculateWTNSBin: (inputs: unknown, sanityCheck: number) => Promise<Uint8Array> }>
}

const quick = process.argv.includes("--quick")
const SNARKJS_CLI = fileURLToPath(new URL("../node_modules/.bin/snarkjs", import.meta.url))
const BUDGET_MS = quick ? 4_000 : 15_000

interface Plan {
  readonly latencyRuns: number
  readonly throughputProofs: number
  readonly cliRuns: number
}
const planFor = (circuit: string): Plan =>
  circuit === "merkle_membership"
    ? { latencyRuns: 3, throughputProofs: quick ? 2 : 6, cliRuns: 2 }
    : { latencyRuns: quick ? 3 : 8, throughputProofs: quick ? 8 : 40, cliRuns: 3 }

interface Measure {
  /** Median milliseconds of one proof. */
  readonly latencyMs: number
  readonly proofsPerSecond: number
  readonly n: number
}

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

/** Runs `once` up to `runs` times (within the time budget); returns each duration in ms. */
const timed = async (runs: number, once: () => Promise<unknown>) => {
  const out: Array<number> = []
  const start = performance.now()
  for (let i = 0; i < runs && (i === 0 || performance.now() - start < BUDGET_MS); i++) {
    const t = performance.now()
    await once()
    out.push(performance.now() - t)
  }
  return out
}

const cases = await makeCases()
const cores = availableParallelism()
const results: Record<string, { a: Measure; b: Measure; c: Measure }> = {}

// (a) mzk's pool. Latency: one proof at a time. Throughput: `throughputProofs` proofs submitted at
// once, so every pool thread stays busy.
const poolResults = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
  const prover = yield* Prover
  const out: Record<string, Measure> = {}
  for (const spec of CIRCUIT_SPECS) {
    const { inputs } = cases[spec.circuit]!
    const prove = () => Effect.runPromise(prover.prove(spec.circuit, inputs))
    const plan = planFor(spec.circuit)
    // Warm every thread's JIT for this circuit.
    yield* Effect.promise(() => Promise.all(Array.from({ length: cores }, prove)))
    const latencies = yield* Effect.promise(() => timed(plan.latencyRuns, prove))
    const t = performance.now()
    yield* Effect.promise(() => Promise.all(Array.from({ length: plan.throughputProofs }, prove)))
    const wall = performance.now() - t
    out[spec.circuit] = { latencyMs: median(latencies), proofsPerSecond: (plan.throughputProofs * 1000) / wall, n: plan.throughputProofs }
  }
  return out
}).pipe(Effect.provide(SnarkjsProverLive({ poolSize: cores })))))

// (b) the warmed in-process loop, then (c) the CLI per proof.
const dir = mkdtempSync(join(tmpdir(), "mzk-bench-"))
try {
  for (const spec of CIRCUIT_SPECS) {
    const { inputs } = cases[spec.circuit]!
    const files = artifactsOf(spec.circuit)
    const plan = planFor(spec.circuit)
    const calculator = await WitnessCalculatorBuilder(readFileSync(files.wasm))
    const zkey = new Uint8Array(readFileSync(files.zkey))
    const prove = async () => snarkjs.groth16.prove(zkey, await calculator.calculateWTNSBin(inputs, 0))
    await prove()
    const loop = await timed(plan.throughputProofs, prove)
    const b: Measure = {
      latencyMs: median(loop),
      proofsPerSecond: (loop.length * 1000) / loop.reduce((s, x) => s + x, 0),
      n: loop.length
    }

    const input = join(dir, `${spec.circuit}.input.json`)
    writeFileSync(input, JSON.stringify(inputs))
    const cli = await timed(plan.cliRuns, async () =>
      execFileSync(SNARKJS_CLI, ["groth16", "fullprove", input, files.wasm, files.zkey, join(dir, "proof.json"), join(dir, "public.json")], {
        stdio: "ignore"
      }))
    const c: Measure = { latencyMs: median(cli), proofsPerSecond: (cli.length * 1000) / cli.reduce((s, x) => s + x, 0), n: cli.length }
    results[spec.circuit] = { a: poolResults[spec.circuit]!, b, c }
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
  await (globalThis as { curve_bn128?: { terminate(): Promise<void> } | null }).curve_bn128?.terminate()
}

const f = (x: number, digits = 1) => x.toFixed(digits).padStart(8)
console.log(`\nGroth16 proving on ${cores} cores (${process.version}); latency = median ms of one proof, p/s = proofs per second\n`)
console.log(
  `${"circuit".padEnd(18)} | ${"(a) mzk pool".padEnd(19)} | ${"(b) in-process loop".padEnd(19)} | ${"(c) snarkjs CLI".padEnd(19)} | a/b p/s | a/c p/s`
)
console.log(`${"".padEnd(18)} | ${"ms".padStart(8)} ${"p/s".padStart(8)}  | ${"ms".padStart(8)} ${"p/s".padStart(8)}  | ${"ms".padStart(8)} ${"p/s".padStart(8)}  |`)
for (const [circuit, { a, b, c }] of Object.entries(results)) {
  console.log(
    `${circuit.padEnd(18)} | ${f(a.latencyMs)} ${f(a.proofsPerSecond, 2)}  | ${f(b.latencyMs)} ${f(b.proofsPerSecond, 2)}  | ` +
      `${f(c.latencyMs)} ${f(c.proofsPerSecond, 2)}  | ${f(a.proofsPerSecond / b.proofsPerSecond, 2)} | ${f(a.proofsPerSecond / c.proofsPerSecond, 2)}`
  )
}
console.log(`\nproofs measured: ${Object.entries(results).map(([n, r]) => `${n} a=${r.a.n} b=${r.b.n} c=${r.c.n}`).join("; ")}`)
console.log("targets: a/b >= 0.90 (within 10% of the engine's loop), a/c >= 5 for the three small circuits")
