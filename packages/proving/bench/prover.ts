// Prover benchmark (not a test): pnpm exec tsx packages/proving/bench/prover.ts [--quick] [--no-cli] [--priority normal]
//
// For every circuit, in one run:
//   1. One proof on one thread, both engines on the same zkey and the same witness (computed
//      once), alternating native / snarkjs proof by proof: snarkjs warmed with a single-threaded
//      bn128 curve (as in the pool), the native addon with threads = 1. Reports the median of the
//      per-pair ratios (and their range) on wall time, and the ratio of the CPU time each engine
//      used (process.cpuUsage: steadier than wall time on a shared machine).
//   2. Throughput on all cores, each engine two ways:
//      (a) mzk's pool (ProverPoolLive, pool size = core count, one proof per thread, the
//          native engine single-threaded per proof), `throughputProofs` submitted at once;
//      (b) the engine's own in-process loop, one proof after the other with everything a loop
//          can keep (witness calculator compiled once, zkey loaded once): snarkjs with its
//          multi-threaded curve, native with threads = core count.
//   3. `snarkjs groth16 fullprove` run per proof from the command line (node_modules/.bin/snarkjs),
//      unless --no-cli.
// Counts and time are bounded: fewer proofs for merkle_membership and for the CLI.
import { ArtifactsRepo, Prover } from "@mzk/core"
import { loadNativeProver } from "@mzk/prover-native"
import { Effect, Layer } from "effect"
import { artifactsInMap } from "@mzk/testkit"
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { availableParallelism, tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import * as snarkjs from "snarkjs"
import { ArtifactFilesLive } from "../src/artifacts/files.js"
import { BUILTIN_CIRCUITS, buildFilesOf } from "../src/catalog.js"
import { ProverPoolLive, type ProverPriority } from "../src/prove/pool.js"
import { makeCases } from "../test/fixtures/inputs.js"

// snarkjs's own witness calculator builder and curve, as the prover threads load them.
const fromSnarkjs = createRequire(createRequire(import.meta.url).resolve("snarkjs"))
const esm = (name: string) => import(pathToFileURL(join(dirname(fromSnarkjs.resolve(name)), "..", "main.js")).href)
const { WitnessCalculatorBuilder } = (await esm("circom_runtime")) as {
  WitnessCalculatorBuilder: (wasm: Uint8Array) => Promise<{ calculateWTNSBin: (inputs: unknown, sanityCheck: number) => Promise<Uint8Array> }>
}
const { buildBn128 } = (await esm("ffjavascript")) as { buildBn128: (singleThread: boolean) => Promise<{ terminate(): Promise<void> }> }
const globals = globalThis as { curve_bn128?: { terminate(): Promise<void> } | null }

// --smoke (CI's check that the bench runs, scripts/test/benchSmoke.test.ts): the multiplier only, one proof of each kind, no CLI.
const SMOKE = process.argv.includes("--smoke")
const quick = SMOKE || process.argv.includes("--quick")
const CIRCUITS = SMOKE ? BUILTIN_CIRCUITS.filter((spec) => spec.name === "multiplier") : BUILTIN_CIRCUITS
// The pools' prover threads run at this priority (the layer's default is low). normal by default
// here: the pool is compared with an in-process loop at normal priority, and on a shared machine
// other processes would take a lower-priority pool's CPU. packages/server/bench/http.ts measures
// what the priority is for.
const priorityArg = process.argv.indexOf("--priority")
const PRIORITY = (priorityArg > 0 ? process.argv[priorityArg + 1] : "normal") as ProverPriority
const withCli = !SMOKE && !process.argv.includes("--no-cli")
const SNARKJS_CLI = fileURLToPath(new URL("../node_modules/.bin/snarkjs", import.meta.url))
const BUDGET_MS = quick ? 4_000 : 15_000

const native = loadNativeProver()
if (!native.ok) console.warn(`native prover unavailable (${native.reason}): its columns are left out`)
const addon = native.ok ? native.addon : undefined

interface Plan {
  /** Pairs of one-thread proofs (native, snarkjs) per circuit. */
  readonly pairs: number
  readonly throughputProofs: { readonly snarkjs: number; readonly native: number }
  readonly cliRuns: number
}
const planFor = (circuit: string): Plan =>
  SMOKE
    ? { pairs: 1, throughputProofs: { snarkjs: 1, native: 2 }, cliRuns: 1 }
    : circuit === "merkle_membership"
    ? { pairs: quick ? 3 : 7, throughputProofs: { snarkjs: quick ? 2 : 6, native: quick ? 8 : 40 }, cliRuns: 2 }
    : { pairs: quick ? 5 : 21, throughputProofs: { snarkjs: quick ? 8 : 40, native: quick ? 100 : 1000 }, cliRuns: 3 }

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const cpuMs = () => {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1000
}

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
const witnessOf = new Map<string, Uint8Array>()
const calculatorOf = new Map<string, Awaited<ReturnType<typeof WitnessCalculatorBuilder>>>()
for (const spec of CIRCUITS) {
  const calculator = await WitnessCalculatorBuilder(readFileSync(buildFilesOf(spec.name).wasm))
  calculatorOf.set(spec.name, calculator)
  witnessOf.set(spec.name, await calculator.calculateWTNSBin(cases[spec.name]!.inputs, 0))
}

// 1. One thread, same witness, alternating.
interface Single {
  readonly snarkjsMs: number
  readonly nativeMs: number
  readonly ratio: number
  readonly ratioMin: number
  readonly ratioMax: number
  readonly cpuRatio: number
  readonly pairs: number
}
const single: Record<string, Single> = {}
if (addon !== undefined) {
  globals.curve_bn128 = await buildBn128(true)
  for (const spec of CIRCUITS) {
    const zkey = new Uint8Array(readFileSync(buildFilesOf(spec.name).zkey))
    const handle = addon.loadZkey(zkey, { threads: cores })
    const wtns = witnessOf.get(spec.name)!
    const proveSnarkjs = () => snarkjs.groth16.prove(zkey, wtns)
    const proveNative = () => addon.prove(handle, wtns, { threads: 1 })
    for (let i = 0; i < 2; i++) {
      await proveSnarkjs()
      proveNative()
    }
    const s: Array<number> = []
    const n: Array<number> = []
    let sCpu = 0
    let nCpu = 0
    const start = performance.now()
    for (let i = 0; i < planFor(spec.name).pairs && (i < 3 || performance.now() - start < 4 * BUDGET_MS); i++) {
      let c = cpuMs()
      let t = performance.now()
      proveNative()
      n.push(performance.now() - t)
      nCpu += cpuMs() - c
      c = cpuMs()
      t = performance.now()
      await proveSnarkjs()
      s.push(performance.now() - t)
      sCpu += cpuMs() - c
    }
    const ratios = s.map((x, i) => x / n[i]!)
    single[spec.name] = {
      snarkjsMs: median(s),
      nativeMs: median(n),
      ratio: median(ratios),
      ratioMin: Math.min(...ratios),
      ratioMax: Math.max(...ratios),
      cpuRatio: sCpu / nCpu,
      pairs: s.length
    }
  }
  await globals.curve_bn128?.terminate()
  globals.curve_bn128 = null
}

// 2a. The pool, per engine: latency of one proof alone, then throughput with every thread busy.
interface Measure {
  /** Median milliseconds of one proof. */
  readonly latencyMs: number
  readonly proofsPerSecond: number
  readonly n: number
}
const poolRun = (engine: "snarkjs" | "native") =>
  Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const prover = yield* Prover
    const out: Record<string, Measure> = {}
    for (const spec of CIRCUITS) {
      const { inputs } = cases[spec.name]!
      const prove = () => Effect.runPromise(prover.prove(spec, inputs))
      const count = planFor(spec.name).throughputProofs[engine]
      // Warm every thread's JIT for this circuit.
      yield* Effect.promise(() => Promise.all(Array.from({ length: cores }, prove)))
      const latencies = yield* Effect.promise(() => timed(engine === "native" ? 8 : 3, prove))
      const t = performance.now()
      yield* Effect.promise(() => Promise.all(Array.from({ length: count }, prove)))
      const wall = performance.now() - t
      out[spec.name] = { latencyMs: median(latencies), proofsPerSecond: (count * 1000) / wall, n: count }
    }
    return out
  }).pipe(Effect.provide(ProverPoolLive({ poolSize: cores, engine, priority: PRIORITY }).pipe(
    // Built-in circuits only: their files are the build, so no artifact store is needed.
    Layer.provide(ArtifactFilesLive()),
    Layer.provide(Layer.succeed(ArtifactsRepo, artifactsInMap()))
  )))))

const pool = {
  snarkjs: await poolRun("snarkjs"),
  native: addon === undefined ? undefined : await poolRun("native")
}

// 2b. Each engine's own loop; 3. the CLI.
const loops: Record<string, { snarkjs: Measure; native?: Measure; cli?: Measure }> = {}
const dir = mkdtempSync(join(tmpdir(), "mzk-bench-"))
const loopMeasure = (xs: ReadonlyArray<number>): Measure => ({
  latencyMs: median(xs),
  proofsPerSecond: (xs.length * 1000) / xs.reduce((s, x) => s + x, 0),
  n: xs.length
})
try {
  for (const spec of CIRCUITS) {
    const { inputs } = cases[spec.name]!
    const files = buildFilesOf(spec.name)
    const plan = planFor(spec.name)
    const calculator = calculatorOf.get(spec.name)!
    const zkey = new Uint8Array(readFileSync(files.zkey))
    const proveSnarkjs = async () => snarkjs.groth16.prove(zkey, await calculator.calculateWTNSBin(inputs, 0))
    await proveSnarkjs()
    const entry: (typeof loops)[string] = { snarkjs: loopMeasure(await timed(plan.throughputProofs.snarkjs, proveSnarkjs)) }
    if (addon !== undefined) {
      const handle = addon.loadZkey(zkey, { threads: cores })
      const proveNative = async () => addon.prove(handle, await calculator.calculateWTNSBin(inputs, 0), { threads: cores })
      await proveNative()
      entry.native = loopMeasure(await timed(plan.throughputProofs.native, proveNative))
    }
    if (withCli) {
      const input = join(dir, `${spec.name}.input.json`)
      writeFileSync(input, JSON.stringify(inputs))
      entry.cli = loopMeasure(await timed(plan.cliRuns, async () =>
        execFileSync(SNARKJS_CLI, ["groth16", "fullprove", input, files.wasm, files.zkey, join(dir, "proof.json"), join(dir, "public.json")], {
          stdio: "ignore"
        })))
    }
    loops[spec.name] = entry
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
  await globals.curve_bn128?.terminate()
}

const f = (x: number | undefined, digits = 1, width = 8) => (x === undefined ? "–" : x.toFixed(digits)).padStart(width)
const ratio = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? undefined : a / b)
const row = (cells: ReadonlyArray<string>) => `| ${cells.join(" | ")} |`

console.log(`\nGroth16 proving on ${cores} cores (${process.version}, native kernel ${addon?.kernel ?? "–"}); ms = median of one proof, p/s = proofs per second`)

if (addon !== undefined) {
  console.log("\n1. One proof, one thread, same zkey and witness, alternating (snarkjs: warm, single-threaded curve)\n")
  console.log(row(["circuit".padEnd(18), "snarkjs ms", "native ms", "snarkjs/native (wall, median of pairs, range)", "snarkjs/native (CPU time)", "pairs"]))
  console.log(row(["---", "---", "---", "---", "---", "---"]))
  for (const [circuit, r] of Object.entries(single)) {
    console.log(row([
      circuit.padEnd(18),
      f(r.snarkjsMs, 1, 10),
      f(r.nativeMs, 2, 9),
      `${r.ratio.toFixed(2)}× (${r.ratioMin.toFixed(2)}–${r.ratioMax.toFixed(2)})`.padEnd(45),
      `${r.cpuRatio.toFixed(2)}×`.padEnd(25),
      String(r.pairs)
    ]))
  }
}

console.log(`\n2. Throughput on all ${cores} cores: the pool (one proof per thread) and each engine's own in-process loop\n`)
console.log(row([
  "circuit".padEnd(18),
  "snarkjs pool ms",
  "snarkjs pool p/s",
  "snarkjs loop p/s",
  "native pool ms",
  "native pool p/s",
  "native loop p/s",
  "native pool/loop",
  "native/snarkjs (pools)"
]))
console.log(row(["---", "---", "---", "---", "---", "---", "---", "---", "---"]))
for (const spec of CIRCUITS) {
  const c = spec.name
  const s = pool.snarkjs[c]!
  const n = pool.native?.[c]
  const l = loops[c]!
  console.log(row([
    c.padEnd(18),
    f(s.latencyMs, 1, 15),
    f(s.proofsPerSecond, 2, 16),
    f(l.snarkjs.proofsPerSecond, 2, 16),
    f(n?.latencyMs, 1, 14),
    f(n?.proofsPerSecond, 1, 15),
    f(l.native?.proofsPerSecond, 1, 15),
    f(ratio(n?.proofsPerSecond, l.native?.proofsPerSecond), 2, 16),
    f(ratio(n?.proofsPerSecond, s.proofsPerSecond), 1, 22)
  ]))
}
if (withCli) {
  console.log("\n3. snarkjs groth16 fullprove per proof (CLI), against the pools\n")
  console.log(row(["circuit".padEnd(18), "CLI ms", "CLI p/s", "snarkjs pool / CLI", "native pool / CLI"]))
  console.log(row(["---", "---", "---", "---", "---"]))
  for (const spec of CIRCUITS) {
    const cli = loops[spec.name]!.cli!
    console.log(row([
      spec.name.padEnd(18),
      f(cli.latencyMs),
      f(cli.proofsPerSecond, 2),
      f(ratio(pool.snarkjs[spec.name]!.proofsPerSecond, cli.proofsPerSecond), 1, 18),
      f(ratio(pool.native?.[spec.name]?.proofsPerSecond, cli.proofsPerSecond), 1, 17)
    ]))
  }
}
const counts = CIRCUITS.map((spec) => {
  const l = loops[spec.name]!
  return `${spec.name} pool ${pool.snarkjs[spec.name]!.n}/${pool.native?.[spec.name]?.n ?? 0}, loop ${l.snarkjs.n}/${l.native?.n ?? 0}`
})
console.log(`\nproofs measured (snarkjs/native): ${counts.join("; ")}; load average ${(await import("node:os")).loadavg().map((x) => x.toFixed(2)).join(" ")}`)
console.log("targets: native/snarkjs one thread >= 5x (stretch 7x) on merkle_membership and range; native pool/loop >= 0.90")
