// Proof-system benchmark (not a test):
//   pnpm bench packages/proving/bench/systems.ts [--quick | --large-only] [--kind mimc|poseidon|sha256] [--power 16] [--runs 3] [--threads 2]
//
// Groth16, PLONK and FFLONK side by side on the same circuits: the four built-ins (compiled from
// packages/proving/circom/ with circom2 --O2, as scripts/build.mjs does) and, unless --quick, one benchmark
// circuit filling a Groth16 domain of 2^power (bench/circuits/sources.ts). Per circuit and system:
//
// - setup: Groth16's native development setup (no ptau) and its native phase 2 against a ptau;
//   snarkjs's PLONK and FFLONK setups (no per-circuit ceremony, only the ptau). Each in a child
//   process (systemsChild.ts): wall, CPU of all its threads, peak RSS. The ptau each needs, by
//   snarkjs's rules: Groth16 2^g ≥ constraints + public signals + 1; PLONK 2^p ≥ PLONK gates (r1cs
//   constraints plus the additions of their linear terms); FFLONK 9·2^f + 18 τ points, a ptau of
//   power f + 3. The ptaus here are development ones (bench/circuits/ptau.ts: one drawn τ, only the
//   sections these setups read), made before and not timed.
// - proving, from a witness computed once (not timed): Groth16 in the native engine and in snarkjs,
//   PLONK and FFLONK in snarkjs; all threads; median of --runs (one at 2^16), in a child process.
// - proof size: snarkjs's JSON and the Solidity calldata (selector, proof, public signals).
// - verification: snarkjs's verify (and the native Groth16 verifier), median of repeated runs; every
//   proof verified, and refused with a public signal changed.
// - on chain: snarkjs's Solidity verifier for the key (Groth16: mzk's renderGroth16Verifier), solc
//   0.8 (optimizer 200 runs), @ethereumjs/evm; the gas of verifyProof's execution and of the whole
//   transaction (+ 21,000 + calldata); the tampered calldata must return false.
// UltraHonk (Noir, bb.js) is not measured here: its column says n/a.
import { loadNativeProver } from "@mzk/prover-native"
import { spawnSync } from "node:child_process"
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { availableParallelism, cpus, loadavg, totalmem } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import * as snarkjs from "snarkjs"
import { BUILTIN_CIRCUITS } from "../src/catalog.js"
import { renderGroth16Verifier } from "../src/solidity/verifier.js"
import { calldataGas, callContract, compileContract, deployContract, encodeStaticCall } from "../test/fixtures/evm.js"
import { makeCases } from "../test/fixtures/inputs.js"
import { type Compiled, compileBenchCircuit } from "./circuits/compile.js"
import { writeDevelopmentPtau } from "./circuits/ptau.js"
import { type BenchKind, benchCircuit } from "./circuits/sources.js"
import { randomField } from "./circuits/artifacts.js"

const arg = (name: string, fallback: string) => {
  const at = process.argv.indexOf(`--${name}`)
  return at > 0 ? process.argv[at + 1]! : fallback
}
// --smoke (CI's check that the bench runs, scripts/test/benchSmoke.test.ts): the multiplier only, one proof each, no benchmark circuit.
const SMOKE = process.argv.includes("--smoke")
const QUICK = SMOKE || process.argv.includes("--quick")
const LARGE_ONLY = process.argv.includes("--large-only")
// The MiMC-style chain by default: every constraint a product of full-size values, as in a hash
// chain, and the quickest of the three kinds for circom2 to compile at 2^16.
const KIND = arg("kind", "mimc") as BenchKind
const POWER = Number(arg("power", "16"))
const RUNS = Number(arg("runs", SMOKE ? "1" : "3"))
const THREADS = Number(arg("threads", String(availableParallelism())))
const CHILD = fileURLToPath(new URL("./systemsChild.ts", import.meta.url))
const R = 21888242871839275222246405745257275088548364400416034343698204186575808495617n

const log = (line: string) => console.error(`[${new Date().toISOString().slice(11, 19)}] ${line}`)
const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const log2floor = (n: number) => Math.floor(Math.log2(n))

type System = "groth16" | "plonk" | "fflonk"
const universal = snarkjs as unknown as Record<"plonk" | "fflonk", {
  setup(r1cs: string, ptau: string, zkey: string, logger?: unknown): Promise<unknown>
  verify(vkey: unknown, signals: ReadonlyArray<string>, proof: unknown): Promise<boolean>
  exportSolidityCallData(a: unknown, b: unknown): Promise<string>
}>
const zKey = snarkjs.zKey as unknown as {
  exportVerificationKey(zkey: string): Promise<Record<string, unknown>>
  exportSolidityVerifier(zkey: string, templates: Record<string, string>): Promise<string>
}
const groth16CallData = (snarkjs.groth16 as unknown as { exportSolidityCallData(proof: unknown, signals: unknown): Promise<string> }).exportSolidityCallData

// snarkjs's own Solidity templates, from the installed package (as src/solidity/verifier.ts reads Groth16's).
const templates = (() => {
  let dir = dirname(createRequire(import.meta.url).resolve("snarkjs"))
  while (!existsSync(join(dir, "templates"))) dir = dirname(dir)
  const read = (name: string) => readFileSync(join(dir, "templates", `verifier_${name}.sol.ejs`), "utf8")
  return { groth16: read("groth16"), plonk: read("plonk"), fflonk: read("fflonk") }
})()

interface Measured {
  readonly ms: number
  readonly cpuMs: number
  readonly peakRssKb: number
}
interface Proved extends Measured {
  readonly runs: number
  readonly proof: unknown
  readonly publicSignals: Array<string>
}

/** Runs systemsChild.ts; its last stdout line is JSON. */
const child = (args: ReadonlyArray<string>): Record<string, unknown> => {
  const r = spawnSync(process.execPath, ["--conditions=@mzk/source", "--import", "tsx", CHILD, ...args], {
    encoding: "utf8",
    maxBuffer: 64 << 20,
  })
  if (r.status !== 0) throw new Error(`systemsChild ${args.join(" ")} failed (${r.status}):\n${(r.stderr + r.stdout).slice(-3000)}`)
  const lines = r.stdout.trim().split("\n")
  return JSON.parse(lines[lines.length - 1]!) as Record<string, unknown>
}
const setup = (what: string, r1cs: string, ptau: string, zkey: string): Measured => {
  log(`setup ${what} → ${zkey}`)
  return child(["setup", what, r1cs, ptau, zkey, String(THREADS)]) as unknown as Measured
}
const prove = (engine: string, zkey: string, wtns: string, runs: number): Proved => {
  log(`prove ${engine} × ${runs}`)
  const r = child(["prove", engine, zkey, wtns, String(runs), String(THREADS)]) as {
    ms: Array<number>
    cpuMs: Array<number>
    peakRssKb: number
    proof: unknown
    publicSignals: Array<string>
  }
  return { ...r, runs, ms: median(r.ms), cpuMs: median(r.cpuMs) }
}

/** PLONK gates of an r1cs, as snarkjs's PLONK setup counts them (it logs the count before it reads the ptau). */
const plonkGates = async (c: Compiled, dir: string): Promise<number> => {
  const cache = join(dir, "plonk_gates.json")
  if (existsSync(cache) && statSync(cache).mtimeMs >= statSync(c.r1cs).mtimeMs) return (JSON.parse(readFileSync(cache, "utf8")) as { gates: number }).gates
  const tiny = join(dir, "tiny.ptau")
  await writeDevelopmentPtau(tiny, { power: 1, tauPoints: 3, lagrange: [1] })
  let gates: number | undefined
  const logger = {
    info: (m: string) => {
      const hit = /^Plonk constraints: (\d+)/.exec(m)
      if (hit) gates = Number(hit[1])
    },
    debug: () => {},
    warn: () => {},
    error: () => {},
  }
  await universal.plonk.setup(c.r1cs, tiny, join(dir, "tiny.zkey"), logger)
  if (gates === undefined) throw new Error("snarkjs's PLONK setup did not log its gate count")
  writeFileSync(cache, JSON.stringify({ gates }))
  return gates
}

/** Times `f` over repeated runs (at least 3, at least 300 ms), the median in ms. */
const timeRepeated = async (f: () => Promise<unknown>) => {
  const ms: Array<number> = []
  const start = performance.now()
  while (ms.length < 3 || (performance.now() - start < 300 && ms.length < 50)) {
    const t = performance.now()
    await f()
    ms.push(performance.now() - t)
  }
  return median(ms)
}

interface Row {
  readonly circuit: string
  readonly constraints: number
  readonly system: string
  readonly engine: string
  readonly domain: number
  readonly ptauPower: number
  readonly setup?: ReadonlyArray<[string, Measured]>
  readonly prove: Proved
  readonly jsonBytes: number
  readonly calldataBytes: number
  readonly verifyMs: number
  readonly nativeVerifyMs?: number
  readonly gas?: { readonly execution: bigint; readonly transaction: bigint }
}

const onChain = async (system: System, zkey: string, vkey: Record<string, unknown>, proof: unknown, signals: Array<string>) => {
  const source = system === "groth16" ? renderGroth16Verifier(vkey) : await zKey.exportSolidityVerifier(zkey, templates)
  const contract = { groth16: "Groth16Verifier", plonk: "PlonkVerifier", fflonk: "FflonkVerifier" }[system]
  const compiled = compileContract(source, contract)
  const deployed = await deployContract(compiled.bytecode)
  const signature = Object.keys(compiled.selectors).find((s) => s.startsWith("verifyProof("))
  if (signature === undefined) throw new Error(`${contract} has no verifyProof`)
  const words = async (s: ReadonlyArray<string>) => {
    const text = system === "groth16" ? await groth16CallData(proof, s) : system === "plonk" ? await universal.plonk.exportSolidityCallData(proof, s) : await universal.fflonk.exportSolidityCallData(s, proof)
    // Every word is a 0x number, in order; the three formats differ in quotes and separators
    // (PLONK's arrays come back to back, FFLONK's numbers unquoted), so only the numbers are read.
    return (text.match(/0x[0-9a-fA-F]+/g) ?? []).map((w) => BigInt(w))
  }
  const data = encodeStaticCall(compiled.selectors[signature]!, await words(signals))
  const good = await callContract(deployed, data)
  if (good.exceptionError !== undefined || !/^0x0*1$/.test(good.returned)) throw new Error(`${contract} refused a valid proof (${good.exceptionError ?? good.returned})`)
  const tampered = await callContract(deployed, encodeStaticCall(compiled.selectors[signature]!, await words([((BigInt(signals[0]!) + 1n) % R).toString(), ...signals.slice(1)])))
  if (/^0x0*1$/.test(tampered.returned)) throw new Error(`${contract} accepted a tampered public signal`)
  return { execution: good.gas, transaction: good.gas + 21_000n + BigInt(calldataGas(data)), calldataBytes: (data.length - 2) / 2 }
}

const s = (ms: number) => (ms >= 10_000 ? `${(ms / 1000).toFixed(0)} s` : ms >= 1000 ? `${(ms / 1000).toFixed(1)} s` : `${ms.toFixed(0)} ms`)
const mb = (kb: number) => `${(kb / 1024).toFixed(0)} MB`
const HEADER =
  "| circuit | r1cs constraints | system | prover | domain | ptau power | setup: wall (CPU), peak RSS | prove: wall (CPU), peak RSS | proof JSON | calldata | verify (snarkjs / native) | verifyProof gas (tx) | UltraHonk |\n" +
  "|---|---:|---|---|---:|---:|---|---|---:|---:|---|---:|---|"
const formatRow = (r: Row) => {
  const setupText = r.setup?.map(([what, m]) => `${what}: ${s(m.ms)} (${s(m.cpuMs)}), ${mb(m.peakRssKb)}`).join("; ") ?? "(the key above)"
  return (
    `| ${r.circuit} | ${r.constraints} | ${r.system} | ${r.engine} | 2^${r.domain} | ${r.ptauPower} | ${setupText} | ` +
    `${s(r.prove.ms)} (${s(r.prove.cpuMs)}), ${mb(r.prove.peakRssKb)} | ${r.jsonBytes} B | ${r.calldataBytes} B | ` +
    `${r.verifyMs.toFixed(1)} ms${r.nativeVerifyMs === undefined ? "" : ` / ${r.nativeVerifyMs.toFixed(2)} ms`} | ${r.gas?.execution ?? "-"} (${r.gas?.transaction ?? "-"}) | n/a |`
  )
}

const rows: Array<Row> = []
const ptauNotes: Array<string> = []

const benchmark = async (label: string, c: Compiled, inputs: Record<string, unknown>, runs: number) => {
  const dir = c.dir
  log(`${label}: ${c.constraints} constraints, ${c.nPublic} public`)
  const input = join(dir, "systems_input.json")
  writeFileSync(input, JSON.stringify(inputs))
  const wtns = join(dir, "systems.wtns")
  await (snarkjs as unknown as { wtns: { calculate(i: unknown, wasm: string, out: string): Promise<void> } }).wtns.calculate(inputs, c.wasm, wtns)

  // The domains, by the rules of each setup (see the header).
  const grothPower = log2floor(c.constraints + c.nPublic) + 1
  const gates = await plonkGates(c, dir)
  const plonkPower = Math.max(3, log2floor(gates - 1) + 1)
  const fflonkPower = Math.max(3, log2floor(gates + 1) + 1)
  const fflonkTau = 9 * 2 ** fflonkPower + 18
  log(`${label}: ${gates} PLONK gates; domains 2^${grothPower} (Groth16), 2^${plonkPower} (PLONK), 2^${fflonkPower} (FFLONK: ${fflonkTau} τ points)`)

  // Development ptaus (not timed as setup): Groth16's full at its power + 1 (so snarkjs's key hash
  // never reads past the τ section), PLONK/FFLONK's with what their setups read.
  const grothPtau = join(dir, `groth16_${grothPower + 1}.ptau`)
  if (!existsSync(grothPtau)) {
    const seconds = await writeDevelopmentPtau(grothPtau, { power: grothPower + 1, tauPoints: 2 ** (grothPower + 2) - 1, lagrange: [grothPower, grothPower + 1], full: { lagrange: grothPower } })
    ptauNotes.push(`${label}: Groth16 development ptau (power ${grothPower + 1}) in ${seconds.toFixed(1)} s`)
    log(ptauNotes[ptauNotes.length - 1]!)
  }
  const uniPtau = join(dir, `universal_${plonkPower}_${fflonkPower}.ptau`)
  if (!existsSync(uniPtau)) {
    const seconds = await writeDevelopmentPtau(uniPtau, { power: Math.max(plonkPower, fflonkPower + 3), tauPoints: Math.max(fflonkTau, 2 ** plonkPower + 6), lagrange: [plonkPower] })
    ptauNotes.push(`${label}: PLONK/FFLONK development ptau (${fflonkTau} τ points) in ${seconds.toFixed(1)} s`)
    log(ptauNotes[ptauNotes.length - 1]!)
  }

  const zkeys = {
    dev: join(dir, "systems_groth16_dev.zkey"),
    groth16: join(dir, "systems_groth16.zkey"),
    plonk: join(dir, "systems_plonk.zkey"),
    fflonk: join(dir, "systems_fflonk.zkey"),
  }
  const native = loadNativeProver()
  if (!native.ok) log(`native addon not loaded (${native.reason}): Groth16 set up and proved by snarkjs only`)
  const setups = {
    groth16: (native.ok
      ? [
          ["dev (native)", setup("groth16-dev", c.r1cs, "-", zkeys.dev)],
          ["phase 2 (native)", setup("groth16-phase2", c.r1cs, grothPtau, zkeys.groth16)],
        ]
      : [["phase 2 (snarkjs)", setup("groth16-snarkjs", c.r1cs, grothPtau, zkeys.groth16)]]) as Array<[string, Measured]>,
    plonk: [["snarkjs", setup("plonk", c.r1cs, uniPtau, zkeys.plonk)]] as Array<[string, Measured]>,
    fflonk: [["snarkjs", setup("fflonk", c.r1cs, uniPtau, zkeys.fflonk)]] as Array<[string, Measured]>,
  }
  const engines: Array<[System, string]> = [
    ...(native.ok ? [["groth16", "native"] as [System, string]] : []),
    ["groth16", "snarkjs"],
    ["plonk", "snarkjs"],
    ["fflonk", "snarkjs"],
  ]
  for (const [system, engine] of engines) {
    const zkey = zkeys[system]
    const proved = prove(system === "groth16" && engine === "native" ? "native" : system, zkey, wtns, runs)
    const vkey = await zKey.exportVerificationKey(zkey)
    const verify = system === "groth16" ? snarkjs.groth16.verify : universal[system].verify
    if (!(await verify(vkey, proved.publicSignals, proved.proof))) throw new Error(`${label}: ${system} (${engine}) proof does not verify`)
    const tampered = [((BigInt(proved.publicSignals[0]!) + 1n) % R).toString(), ...proved.publicSignals.slice(1)]
    if (await verify(vkey, tampered, proved.proof)) throw new Error(`${label}: ${system} (${engine}) verifies a tampered public signal`)
    const verifyMs = await timeRepeated(() => verify(vkey, proved.publicSignals, proved.proof))
    let nativeVerifyMs: number | undefined
    if (system === "groth16" && native.ok) {
      const handle = native.addon.prepareVerifyingKey(vkey as never)
      nativeVerifyMs = await timeRepeated(async () => {
        if (!native.addon.verifyGroth16(handle, proved.proof as never, proved.publicSignals)) throw new Error("the native verifier refused a proof snarkjs accepts")
      })
    }
    const chain = await onChain(system, zkey, vkey, proved.proof, proved.publicSignals)
    const row: Row = {
      circuit: label,
      constraints: c.constraints,
      system,
      engine,
      domain: { groth16: grothPower, plonk: plonkPower, fflonk: fflonkPower }[system],
      ptauPower: { groth16: grothPower, plonk: plonkPower, fflonk: fflonkPower + 3 }[system],
      ...(engine === "snarkjs" && system === "groth16" && native.ok ? {} : { setup: setups[system] }),
      prove: proved,
      jsonBytes: JSON.stringify(proved.proof).length,
      calldataBytes: chain.calldataBytes,
      verifyMs,
      ...(nativeVerifyMs === undefined ? {} : { nativeVerifyMs }),
      gas: { execution: chain.execution, transaction: chain.transaction },
    }
    rows.push(row)
    // Each row as soon as it is measured (stderr), so a run stopped early keeps what it measured.
    log(`${formatRow(row)} (load ${loadavg()[0]!.toFixed(1)})`)
  }
}

const started = performance.now()
const cpu0 = process.cpuUsage()
const load0 = loadavg()
const cases = await makeCases()
for (const b of LARGE_ONLY ? [] : SMOKE ? BUILTIN_CIRCUITS.filter((c) => c.name === "multiplier") : BUILTIN_CIRCUITS) {
  const source = readFileSync(fileURLToPath(new URL(`../circom/${b.name}.circom`, import.meta.url)), "utf8")
  const compiled = await compileBenchCircuit({ name: `builtin_${b.name}`, source }, { log })
  await benchmark(b.name, compiled, cases[b.name]!.inputs as Record<string, unknown>, RUNS)
}
if (!QUICK) {
  const circuit = benchCircuit(KIND, POWER)
  const compiled = await compileBenchCircuit(circuit, { log })
  await benchmark(circuit.name, compiled, circuit.sampleInputs(randomField), Math.max(1, Math.min(RUNS, POWER >= 16 ? 1 : RUNS)))
}

console.log(
  `\n${cpus()[0]?.model ?? "?"}, ${availableParallelism()} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB; ${THREADS} threads; ` +
    `load average at start ${load0.map((l) => l.toFixed(1)).join(" ")}, at end ${loadavg().map((l) => l.toFixed(1)).join(" ")}`,
)
for (const n of ptauNotes) console.log(n)
console.log(`\n${HEADER}`)
for (const r of rows) console.log(formatRow(r))
const cpu = process.cpuUsage(cpu0)
console.log(
  `\nUltraHonk: n/a (Noir programs and bb.js are another helper's item; this benchmark measures the circom systems).` +
    `\nthis process: ${s(performance.now() - started)} wall, ${s((cpu.user + cpu.system) / 1000)} CPU (children's time is in their rows)`,
)
await (globalThis as { curve_bn128?: { terminate(): Promise<void> } | null }).curve_bn128?.terminate()
