// One engine on one key in a process of its own, so that its peak RSS is its own (large.ts runs it).
//   largeChild.ts mzk <zkey> <sha256> <wtns> <runs> <threads> [tableBudgetMB | LoadOptions as JSON]
//   largeChild.ts snarkjs <zkey> - <wtns> <runs> <threads>
//   largeChild.ts witness <wasm> - <input.json> <runs>
// Prints one JSON line: times in ms (wall and this process's CPU), the proof of the first run of
// each thread count (the parent verifies it), the process's peak RSS (VmHWM).
import { loadNativeProver } from "@mzk/prover-native"
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { pathToFileURL } from "node:url"
import * as snarkjs from "snarkjs"

const argv = process.argv.slice(2)
const [engine, file, digest, data] = [argv[0]!, argv[1]!, argv[2]!, argv[3]!]
const runs = Number(argv[4])
const allThreads = Number(argv[5])
const budgetArg = argv[6]

const cpuMs = () => {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1000
}
const status = (field: string) => Number(/\d+/.exec(readFileSync("/proc/self/status", "utf8").split("\n").find((l) => l.startsWith(field)) ?? "0")?.[0])
const timed = async <A>(f: () => A | Promise<A>) => {
  const c = cpuMs()
  const t = performance.now()
  const value = await f()
  return { value, ms: performance.now() - t, cpuMs: cpuMs() - c }
}

interface Runs {
  readonly threads: number
  readonly ms: Array<number>
  readonly cpuMs: Array<number>
  proof?: unknown
  publicSignals?: ReadonlyArray<string>
}
const repeat = async (threads: number, prove: () => Promise<{ proof: unknown; publicSignals: ReadonlyArray<string> }>) => {
  const out: Runs = { threads, ms: [], cpuMs: [] }
  for (let i = 0; i < runs; i++) {
    const r = await timed(prove)
    out.ms.push(r.ms)
    out.cpuMs.push(r.cpuMs)
    if (i === 0) {
      out.proof = r.value.proof
      out.publicSignals = r.value.publicSignals
    }
  }
  return out
}

const rssBeforeKb = status("VmRSS:")
let result: Record<string, unknown>
if (engine === "mzk") {
  const native = loadNativeProver()
  if (!native.ok) throw new Error(native.reason)
  const addon = native.addon
  const wtns = new Uint8Array(readFileSync(data))
  const budget = budgetArg === undefined ? {} : budgetArg.startsWith("{") ? (JSON.parse(budgetArg) as object) : { tableBudgetMB: Number(budgetArg) }
  const load1 = await timed(() => addon.loadZkeyFile(file, { sha256: digest, threads: allThreads, cache: false, ...budget }))
  const info = addon.zkeyInfo(load1.value)
  const rssLoadedKb = status("VmRSS:")
  const one = await repeat(1, async () => addon.prove(load1.value, wtns, { threads: 1 }))
  const all = allThreads > 1 ? await repeat(allThreads, async () => addon.prove(load1.value, wtns, { threads: allThreads })) : undefined
  result = { load: { ms: load1.ms, cpuMs: load1.cpuMs }, tableBytes: info.tableBytes, tableCache: info.tableCache, msm: info.msm, rssLoadedKb, one, all }
} else if (engine === "snarkjs") {
  // snarkjs's own ffjavascript: a single-threaded curve for the one-thread runs, as the pool uses.
  const fromSnarkjs = createRequire(createRequire(import.meta.url).resolve("snarkjs"))
  const ffjavascript = (await import(pathToFileURL(join(dirname(fromSnarkjs.resolve("ffjavascript")), "..", "main.js")).href)) as {
    buildBn128: (singleThread: boolean) => Promise<{ terminate(): Promise<void> }>
  }
  const globals = globalThis as { curve_bn128?: { terminate(): Promise<void> } | null }
  const load = await timed(() => new Uint8Array(readFileSync(file)))
  const wtns = new Uint8Array(readFileSync(data))
  globals.curve_bn128 = await ffjavascript.buildBn128(true)
  const one = await repeat(1, () => snarkjs.groth16.prove(load.value, wtns))
  await globals.curve_bn128.terminate()
  globals.curve_bn128 = await ffjavascript.buildBn128(false)
  const all = allThreads > 1 ? await repeat(allThreads, () => snarkjs.groth16.prove(load.value, wtns)) : undefined
  await globals.curve_bn128.terminate()
  globals.curve_bn128 = null
  result = { load: { ms: load.ms, cpuMs: load.cpuMs }, one, all }
} else if (engine === "witness") {
  const fromSnarkjs = createRequire(createRequire(import.meta.url).resolve("snarkjs"))
  const runtime = (await import(pathToFileURL(join(dirname(fromSnarkjs.resolve("circom_runtime")), "..", "main.js")).href)) as {
    WitnessCalculatorBuilder: (wasm: Uint8Array) => Promise<{ calculateWTNSBin: (inputs: unknown, sanityCheck: number) => Promise<Uint8Array> }>
  }
  const input = JSON.parse(readFileSync(data, "utf8")) as Record<string, unknown>
  const build = await timed(async () => runtime.WitnessCalculatorBuilder(new Uint8Array(readFileSync(file))))
  const ms: Array<number> = []
  const cpu: Array<number> = []
  for (let i = 0; i < runs; i++) {
    const r = await timed(() => build.value.calculateWTNSBin(input, 0))
    ms.push(r.ms)
    cpu.push(r.cpuMs)
  }
  result = { compile: { ms: build.ms, cpuMs: build.cpuMs }, ms, cpuMs: cpu }
} else throw new Error(`unknown engine ${engine}`)

console.log(JSON.stringify({ ...result, rssBeforeKb, peakRssKb: status("VmHWM:") }))
process.exit(0)
