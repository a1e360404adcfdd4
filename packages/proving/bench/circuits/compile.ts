// Compiles a benchmark circuit with circom2 into a cache folder, reusing what is there.
import { spawn } from "node:child_process"
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { homedir } from "node:os"
import { dirname, join, relative } from "node:path"
import { readR1csHeader } from "../../src/formats/iden3.mjs"
import type { BenchCircuit } from "./sources.js"

const require = createRequire(import.meta.url)

/** Outside the repository: the artifacts of 2^20 circuits are gigabytes. */
export const benchCacheDir = (): string => process.env["MZK_BENCH_CACHE"] ?? join(homedir(), ".cache", "mzk-bench")

export interface Compiled {
  readonly dir: string
  readonly r1cs: string
  readonly wasm: string
  readonly sym: string
  readonly constraints: number
  readonly nPublic: number
  readonly wires: number
  /** Seconds circom2 took, or undefined when the cache had it. */
  readonly compileSeconds: number | undefined
}

// circom2 runs under WASI with only the working directory (and its parents) visible, and pnpm's
// node_modules entries are symlinks leading elsewhere: circomlib is copied into the cache once.
const ensureLibrary = (root: string) => {
  const lib = join(root, "lib", "circomlib", "circuits")
  if (existsSync(join(lib, "poseidon.circom"))) return
  const circomlib = join(dirname(require.resolve("circomlib/package.json")), "circuits")
  cpSync(circomlib, lib, { recursive: true, dereference: true })
}

const run = (args: ReadonlyArray<string>, cwd: string, maxOldSpaceMb?: number) =>
  new Promise<string>((resolve, reject) => {
    const node = [...(maxOldSpaceMb ? [`--max-old-space-size=${maxOldSpaceMb}`] : []), ...args]
    const child = spawn(process.execPath, node, { cwd, stdio: ["ignore", "pipe", "pipe"] })
    let out = ""
    child.stdout.on("data", (d: Buffer) => (out += d.toString()))
    child.stderr.on("data", (d: Buffer) => (out += d.toString()))
    child.on("error", reject)
    child.on("close", (code) =>
      code === 0 && !/error\[/i.test(out) ? resolve(out) : reject(new Error(`circom2 exited ${code}:\n${out.slice(-4000)}`)),
    )
  })

export interface CompileOptions {
  readonly cacheDir?: string
  /** Also write circom's C++ witness generator (`<name>_cpp/`). */
  readonly cpp?: boolean
  readonly log?: (line: string) => void
}

/** What compiling needs: a benchmark circuit, or any circom source (a built-in's) under a name. */
export type CompilableCircuit = Pick<BenchCircuit, "name" | "source" | "optimisation"> & Partial<Pick<BenchCircuit, "kind" | "units">>

/** r1cs, wasm and sym of the circuit under `<cache>/<name>/`, compiled unless already there. */
export const compileBenchCircuit = async (circuit: CompilableCircuit, options: CompileOptions = {}): Promise<Compiled> => {
  const root = options.cacheDir ?? benchCacheDir()
  const dir = join(root, circuit.name)
  const r1cs = join(dir, `${circuit.name}.r1cs`)
  const wasm = join(dir, `${circuit.name}_js`, `${circuit.name}.wasm`)
  const sym = join(dir, `${circuit.name}.sym`)
  const sourcePath = join(dir, `${circuit.name}.circom`)
  const cppWanted = options.cpp === true
  const cppThere = existsSync(join(dir, `${circuit.name}_cpp`, "main.cpp"))
  // A changed source (other sizes) invalidates the cached outputs.
  const same = existsSync(sourcePath) && readFileSync(sourcePath, "utf8") === circuit.source
  let compileSeconds: number | undefined
  if (!same || !existsSync(r1cs) || !existsSync(wasm) || !existsSync(sym) || (cppWanted && !cppThere)) {
    ensureLibrary(root)
    const tmp = `${dir}.tmp`
    rmSync(tmp, { recursive: true, force: true })
    mkdirSync(tmp, { recursive: true })
    writeFileSync(join(tmp, `${circuit.name}.circom`), circuit.source)
    const rel = (p: string) => relative(root, p) || "."
    const cli = require.resolve("circom2/cli.js")
    const args = [cli, rel(join(tmp, `${circuit.name}.circom`)), "--r1cs", "--wasm", "--sym", `--${circuit.optimisation ?? "O2"}`]
    if (cppWanted) args.push("--c")
    args.push("-l", rel(join(root, "lib")), "-o", rel(tmp))
    const size = circuit.kind === undefined ? "" : `${circuit.units} ${{ poseidon: "hashes", sha256: "bytes", mimc: "rounds" }[circuit.kind]}, `
    options.log?.(`compiling ${circuit.name} (${size}--${circuit.optimisation ?? "O2"})`)
    const t = performance.now()
    await run(args, root, 8192)
    compileSeconds = (performance.now() - t) / 1000
    rmSync(dir, { recursive: true, force: true })
    renameSync(tmp, dir)
  }
  const header = readR1csHeader(readFileSync(r1cs))
  return {
    dir,
    r1cs,
    wasm,
    sym,
    constraints: header.nConstraints,
    nPublic: header.nOutputs + header.nPubInputs,
    wires: header.nVars,
    compileSeconds,
  }
}
