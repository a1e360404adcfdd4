// Large-circuit benchmark (not a test): pnpm bench packages/proving/bench/large.ts
//   [--sizes 16,18,20] [--kinds poseidon,sha256] [--runs 3] [--engines mzk,rapidsnark,snarkjs]
//   [--snarkjs-max-power 18] [--mzk default,unbounded] [--table-budget MB (unbounded's)] [--cpp-witness]
//   [--rapidsnark PATH] [--json out.json]
//
// For each circuit (packages/proving/bench/circuits: a Poseidon chain and SHA-256 of N bytes, filling a
// domain of 2^size), side by side in one run on the same zkey and the same witness:
//   - witness generation with the circuit's wasm (circom_runtime, as mzk's prover threads run it)
//     and, with --cpp-witness, with circom's C++ generator compiled for the circuit;
//   - each engine in a child process of its own (its peak RSS is its own): key load, one proof on
//     one thread and on every thread, `runs` times each, wall and CPU time;
//   - every engine's first proof verified with snarkjs against the key's verification key.
// rapidsnark is not part of mzk: build it beside the repository (rapidsnarkDriver.cpp says how)
// with its thread pool sized from RAPIDSNARK_THREADS, and a driver that keeps the key loaded
// (groth16_prover_create_zkey_file once, then groth16_prover_prove); --rapidsnark names the driver
// (default $RAPIDSNARK_BENCH). Without it its columns are left out.
import { execFileSync, spawnSync } from "node:child_process"
import { createHash } from "node:crypto"
import { createReadStream, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { availableParallelism, tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import * as snarkjs from "snarkjs"
import { type BenchArtifacts, prepareBenchArtifacts } from "./circuits/artifacts.js"
import { BENCH_KINDS, type BenchKind, benchCircuit } from "./circuits/sources.js"

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`)
  return i > 0 ? process.argv[i + 1]! : fallback
}
// --smoke (CI's check that the bench runs, scripts/test/benchSmoke.test.ts): one MiMC chain of 2^10, one run, mzk at the
// default budget and snarkjs (the cache: $MZK_BENCH_CACHE, which the smoke test points at a temporary folder).
const SMOKE = process.argv.includes("--smoke")
const sizes = arg("sizes", SMOKE ? "10" : "16,18").split(",").map(Number)
const kinds = arg("kinds", SMOKE ? "mimc" : BENCH_KINDS.join(",")).split(",") as Array<BenchKind>
const runs = Number(arg("runs", SMOKE ? "1" : "3"))
const engines = arg("engines", SMOKE ? "mzk,snarkjs" : "mzk,rapidsnark,snarkjs").split(",")
const snarkjsMaxPower = Number(arg("snarkjs-max-power", "18"))
const tableBudget = arg("table-budget", "")
const mzkModes = arg("mzk", SMOKE ? "default" : "default,unbounded").split(",") as Array<"default" | "unbounded">
const cppWitness = process.argv.includes("--cpp-witness")
const rapidsnark = arg("rapidsnark", process.env["RAPIDSNARK_BENCH"] ?? "")
const cores = availableParallelism()
const CHILD = fileURLToPath(new URL("./largeChild.ts", import.meta.url))

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const log = (line: string) => console.error(`[${new Date().toISOString().slice(11, 19)}] ${line}`)

const sha256File = (path: string) =>
  new Promise<string>((resolve, reject) => {
    const h = createHash("sha256")
    createReadStream(path)
      .on("data", (d) => h.update(d))
      .on("end", () => resolve(h.digest("hex")))
      .on("error", reject)
  })

/** Runs a child to completion; its last stdout line is JSON. */
const child = (command: string, args: ReadonlyArray<string>, env: Record<string, string> = {}) => {
  const r = spawnSync(command, args, { encoding: "utf8", env: { ...process.env, ...env }, maxBuffer: 64 << 20 })
  if (r.status !== 0) throw new Error(`${command} ${args.join(" ")} failed (${r.status}):\n${r.stderr.slice(-3000)}`)
  const lines = r.stdout.trim().split("\n")
  return JSON.parse(lines[lines.length - 1]!) as Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any
}
const nodeChild = (args: ReadonlyArray<string>) =>
  child(process.execPath, ["--conditions=@mzk/source", "--import", "tsx", CHILD, ...args])

const verify = async (a: BenchArtifacts, engine: string, proof: unknown, publicSignals: unknown) => {
  const vkey = JSON.parse(readFileSync(a.vkey, "utf8")) as unknown
  const ok = await snarkjs.groth16.verify(vkey, publicSignals as Array<string>, proof)
  if (!ok) throw new Error(`${engine}'s proof of ${a.circuit.name} does not verify`)
}

interface Row {
  readonly circuit: string
  readonly engine: string
  readonly constraints: number
  readonly zkeyMB: number
  readonly loadMs?: number
  readonly loadCpuMs?: number
  readonly tableMiB?: number
  readonly witnessMs: number
  readonly witnessCpuMs: number
  readonly one?: { readonly ms: number; readonly cpuMs: number }
  readonly all?: number
  readonly e2eMs?: number
  readonly peakRssMB: number
  /** mzk at the default budget in a second, fresh process that maps the first one's table file. */
  readonly mapped?: {
    readonly cache: string
    readonly loadMs: number
    readonly firstMs: number
    readonly firstCpuMs: number
    readonly warmMs: number
    readonly warmCpuMs: number
    readonly peakRssMB: number
  }
}

/** circom's C++ witness generator for the circuit, built once (make, with nasm and GMP). */
const cppWitnessMs = (a: BenchArtifacts) => {
  const dir = join(a.dir, `${a.circuit.name}_cpp`)
  const bin = join(dir, a.circuit.name)
  if (!existsSync(join(dir, "main.cpp"))) throw new Error(`${a.circuit.name}: compile with cpp: true first`)
  if (!existsSync(bin)) {
    log(`building the C++ witness generator of ${a.circuit.name}`)
    const t = performance.now()
    execFileSync("nice", ["-n", "10", "make", "-C", dir, "-j2"], { stdio: "ignore" })
    log(`  built in ${((performance.now() - t) / 1000).toFixed(1)} s`)
  }
  const out = join(mkdtempSync(join(tmpdir(), "mzk-bench-")), "w.wtns")
  const ms: Array<number> = []
  const cpu: Array<number> = []
  for (let i = 0; i < runs; i++) {
    // GNU time's user + system seconds: the process's CPU, steadier than wall time on a shared machine.
    const r = spawnSync("/usr/bin/time", ["-f", "%e %U %S", bin, a.input, out], { encoding: "utf8" })
    if (r.status !== 0) throw new Error(`${bin} failed: ${r.stderr}`)
    const [e, u, sy] = r.stderr.trim().split("\n").pop()!.split(" ").map(Number) as [number, number, number]
    ms.push(e * 1000)
    cpu.push((u + sy) * 1000)
  }
  const same = Buffer.compare(readFileSync(out), readFileSync(a.wtns)) === 0
  rmSync(out, { force: true })
  return { ms: median(ms), cpuMs: median(cpu), same }
}

const rows: Array<Row> = []
const witnessLines: Array<string> = []
for (const power of sizes)
  for (const kind of kinds) {
    const circuit = benchCircuit(kind, power)
    const a = await prepareBenchArtifacts(circuit, { log, cpp: cppWitness })
    if (a.setupSeconds !== undefined) log(`  development setup: ${a.setupSeconds.toFixed(1)} s`)
    const digest = await sha256File(a.zkey)
    const base = { circuit: `${kind} 2^${power}`, constraints: a.constraints, zkeyMB: a.zkeyBytes / 1e6 }

    log(`${circuit.name}: witness (wasm)`)
    const w = nodeChild(["witness", a.wasm, "-", a.input, String(runs)])
    const witnessMs = median(w["ms"] as Array<number>)
    const witnessCpuMs = median(w["cpuMs"] as Array<number>)
    let cppLine = ""
    if (cppWitness) {
      const cpp = cppWitnessMs(a)
      cppLine = `; C++ ${cpp.ms.toFixed(0)} ms (CPU ${cpp.cpuMs.toFixed(0)}, process start and file I/O included: ${(witnessCpuMs / cpp.cpuMs).toFixed(1)}× the wasm's speed by CPU${cpp.same ? ", same witness" : ", WITNESS DIFFERS"})`
    }
    witnessLines.push(
      `${base.circuit}: wasm ${witnessMs.toFixed(0)} ms (CPU ${witnessCpuMs.toFixed(0)}; + ${(w["compile"].ms as number).toFixed(0)} ms to compile the wasm), peak RSS ${(w["peakRssKb"] / 1024).toFixed(0)} MB${cppLine}`,
    )
    const wit = { witnessMs, witnessCpuMs }

    if (engines.includes("mzk")) {
      // "unbounded": the addon's own default (tables up to 1 GiB, every copy that fits), the
      // figure before the budget; "default": what the server's pool passes with its defaults
      // (--prover-memory 1 GiB, tables capped at 64 MiB, a key too large for the budget loaded on
      // its bases alone) and its disk table cache, in two processes: the first builds and writes
      // the tables, the second (a fresh worker) maps them.
      for (const mode of mzkModes) {
        const cacheDir = mode === "default" ? mkdtempSync(join(tmpdir(), "mzk-bench-tables-")) : undefined
        const options =
          mode === "unbounded"
            ? tableBudget
              ? [tableBudget]
              : []
            : [JSON.stringify({ tableBudgetMB: 64, memoryBudgetMB: 1024, proofsInFlight: 1, overBudget: "least", tableCacheDir: cacheDir })]
        log(`${circuit.name}: mzk (${mode})`)
        const r = nodeChild(["mzk", a.zkey, digest, a.wtns, String(runs), String(cores), ...options])
        await verify(a, "mzk", r["one"].proof, r["one"].publicSignals)
        if (r["all"]) await verify(a, "mzk", r["all"].proof, r["all"].publicSignals)
        let mapped: Row["mapped"]
        if (cacheDir !== undefined) {
          log(`${circuit.name}: mzk (${mode}, tables mapped from the disk cache)`)
          const m = nodeChild(["mzk", a.zkey, digest, a.wtns, String(Math.max(2, runs)), "1", ...options])
          await verify(a, "mzk (mapped tables)", m["one"].proof, m["one"].publicSignals)
          rmSync(cacheDir, { recursive: true, force: true })
          const ms = m["one"].ms as Array<number>
          const cpuMs = m["one"].cpuMs as Array<number>
          mapped = {
            cache: `${r["tableCache"]} → ${m["tableCache"]}`,
            loadMs: m["load"].ms,
            firstMs: ms[0]!,
            firstCpuMs: cpuMs[0]!,
            warmMs: median(ms.slice(1)),
            warmCpuMs: median(cpuMs.slice(1)),
            peakRssMB: m["peakRssKb"] / 1024,
          }
        }
        const all = r["all"] ? median(r["all"].ms) : median(r["one"].ms)
        rows.push({
          ...base,
          engine: mode === "default" ? "mzk native, default budget" : "mzk native, unbounded",
          loadMs: r["load"].ms,
          loadCpuMs: r["load"].cpuMs,
          tableMiB: r["tableBytes"] / 2 ** 20,
          ...wit,
          one: { ms: median(r["one"].ms), cpuMs: median(r["one"].cpuMs) },
          all,
          e2eMs: witnessMs + r["load"].ms + all,
          peakRssMB: r["peakRssKb"] / 1024,
          ...(mapped ? { mapped } : {}),
        })
      }
    }
    if (engines.includes("rapidsnark") && rapidsnark !== "") {
      log(`${circuit.name}: rapidsnark`)
      const out = mkdtempSync(join(tmpdir(), "mzk-bench-rs-"))
      const runRs = (threads: number) => {
        const r = child(rapidsnark, [a.zkey, a.wtns, String(runs), out], { RAPIDSNARK_THREADS: String(threads), OMP_NUM_THREADS: String(threads) })
        return { r, proof: JSON.parse(readFileSync(join(out, "proof.json"), "utf8")), pub: JSON.parse(readFileSync(join(out, "public.json"), "utf8")) }
      }
      const one = runRs(1)
      await verify(a, "rapidsnark", one.proof, one.pub)
      const all = cores > 1 ? runRs(cores) : one
      await verify(a, "rapidsnark", all.proof, all.pub)
      rmSync(out, { recursive: true, force: true })
      const allMs = median(all.r["proveMs"])
      rows.push({
        ...base,
        engine: "rapidsnark",
        loadMs: all.r["loadMs"],
        loadCpuMs: all.r["loadCpuMs"],
        ...wit,
        one: { ms: median(one.r["proveMs"]), cpuMs: median(one.r["proveCpuMs"]) },
        all: allMs,
        e2eMs: witnessMs + all.r["loadMs"] + allMs,
        peakRssMB: Math.max(one.r["peakRssKb"], all.r["peakRssKb"]) / 1024,
      })
    }
    if (engines.includes("snarkjs")) {
      if (power > snarkjsMaxPower) log(`${circuit.name}: snarkjs skipped (2^${power} > --snarkjs-max-power ${snarkjsMaxPower})`)
      else {
        log(`${circuit.name}: snarkjs`)
        const r = nodeChild(["snarkjs", a.zkey, "-", a.wtns, String(Math.min(runs, 2)), String(cores)])
        await verify(a, "snarkjs", r["one"].proof, r["one"].publicSignals)
        const all = r["all"] ? median(r["all"].ms) : median(r["one"].ms)
        rows.push({
          ...base,
          engine: "snarkjs",
          loadMs: r["load"].ms,
          loadCpuMs: r["load"].cpuMs,
          ...wit,
          one: { ms: median(r["one"].ms), cpuMs: median(r["one"].cpuMs) },
          all,
          e2eMs: witnessMs + r["load"].ms + all,
          peakRssMB: r["peakRssKb"] / 1024,
        })
      }
    }
  }
await (globalThis as { curve_bn128?: { terminate(): Promise<void> } }).curve_bn128?.terminate()

const f0 = (x: number | undefined) => (x === undefined ? "–" : Math.round(x).toLocaleString("en-US"))
console.log(`\n${cores} threads; median of ${runs} runs; times in ms; every engine's proof verified by snarkjs.\n`)
// Witness share: of one core's work for a proof (witness CPU against witness + one-thread proof CPU),
// the figure a busy pool sees; wall times here depend on the machine's load.
console.log("| circuit | engine | constraints | zkey MB | key load (CPU) | tables MiB | witness, wasm (CPU) | prove, 1 thread (CPU) | prove, all threads | end to end | witness share (CPU) | peak RSS MB |")
console.log("|---|---|---|---|---|---|---|---|---|---|---|---|")
for (const r of rows) {
  const share = r.one ? `${((100 * r.witnessCpuMs) / (r.witnessCpuMs + r.one.cpuMs)).toFixed(0)} %` : "–"
  console.log(
    `| ${r.circuit} | ${r.engine} | ${r.constraints.toLocaleString("en-US")} | ${r.zkeyMB.toFixed(0)} | ${f0(r.loadMs)} (${f0(r.loadCpuMs)}) | ${r.tableMiB === undefined ? "–" : r.tableMiB.toFixed(0)} | ${f0(r.witnessMs)} (${f0(r.witnessCpuMs)}) | ${f0(r.one?.ms)} (${f0(r.one?.cpuMs)}) | ${f0(r.all)} | ${f0(r.e2eMs)} | ${share} | ${r.peakRssMB.toFixed(0)} |`,
  )
}
console.log("\nPer core (CPU time of one single-threaded proof), against mzk:")
for (const r of rows.filter((x) => !x.engine.startsWith("mzk"))) {
  for (const m of rows.filter((x) => x.circuit === r.circuit && x.engine.startsWith("mzk")))
    if (m.one && r.one && !r.engine.startsWith("mzk")) console.log(`  ${r.circuit}: ${r.engine} / ${m.engine} = ${(r.one.cpuMs / m.one.cpuMs).toFixed(2)}×`)
}
console.log("\nDisk table cache (default budget): a fresh process maps the tables the first one wrote; cold = load + first proof on 1 thread, against a warm proof of the same process:")
for (const r of rows)
  if (r.mapped) {
    const m = r.mapped
    console.log(
      `  ${r.circuit}: ${m.cache}; built load ${f0(r.loadMs)} ms, mapped load ${f0(m.loadMs)} ms, first proof ${f0(m.firstMs)} ms (CPU ${f0(m.firstCpuMs)}), warm ${f0(m.warmMs)} ms (CPU ${f0(m.warmCpuMs)}), cold / warm ${((m.loadMs + m.firstMs) / m.warmMs).toFixed(2)}, peak RSS ${m.peakRssMB.toFixed(0)} MB`,
    )
  }
console.log("\nWitness generation:")
for (const l of witnessLines) console.log(`  ${l}`)
const json = arg("json", "")
if (json !== "") writeFileSync(json, JSON.stringify({ cores, runs, rows, witness: witnessLines }, null, 2))
