// Everything a benchmark circuit needs, in the cache outside the repository, made once and reused:
// r1cs/wasm/sym (circom2), a sample input, its witness (the circuit's wasm), a development key
// (the native development setup: fresh random toxic waste, seconds instead of a ptau's hours) and
// its verification key.
import { loadNativeProver } from "@mzk/prover-native"
import { randomBytes } from "node:crypto"
import { existsSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs"
import { availableParallelism } from "node:os"
import { join } from "node:path"
import * as snarkjs from "snarkjs"
import { setUpDevelopmentKey } from "../../src/build/developmentSetup.mjs"
import { type CompileOptions, type Compiled, compileBenchCircuit } from "./compile.js"
import type { BenchCircuit } from "./sources.js"

/** Whether this process can key benchmark circuits (the native development setup is in the addon). */
export const nativeSetup = () => loadNativeProver()

export interface BenchArtifacts extends Compiled {
  readonly circuit: BenchCircuit
  readonly input: string
  readonly wtns: string
  readonly zkey: string
  readonly vkey: string
  readonly zkeyBytes: number
  /** Seconds each step took this time (undefined: reused from the cache). */
  readonly setupSeconds: number | undefined
}

/** A field element below 2^248 from the OS CSPRNG (below r, so the wasm takes it as it is). */
export const randomField = (): bigint => BigInt(`0x${randomBytes(31).toString("hex")}`)

const fresh = (path: string, ...inputs: ReadonlyArray<string>) =>
  existsSync(path) && inputs.every((i) => statSync(i).mtimeMs <= statSync(path).mtimeMs)

/** Writes `path` through a temporary file, so an interrupted run never leaves half a file behind. */
const atomically = async (path: string, write: (tmp: string) => Promise<void>) => {
  const tmp = `${path}.tmp`
  await write(tmp)
  renameSync(tmp, path)
}

export const prepareBenchArtifacts = async (
  circuit: BenchCircuit,
  options: CompileOptions & { readonly threads?: number } = {},
): Promise<BenchArtifacts> => {
  const compiled = await compileBenchCircuit(circuit, options)
  const input = join(compiled.dir, "input.json")
  const wtns = join(compiled.dir, `${circuit.name}.wtns`)
  const zkey = join(compiled.dir, `${circuit.name}.zkey`)
  const vkey = join(compiled.dir, "verification_key.json")
  if (!fresh(input, compiled.wasm)) writeFileSync(input, JSON.stringify(circuit.sampleInputs(randomField)))
  if (!fresh(wtns, input, compiled.wasm)) {
    options.log?.(`witness of ${circuit.name}`)
    await atomically(wtns, (tmp) => snarkjs.wtns.calculate(JSON.parse(readFileSync(input, "utf8")), compiled.wasm, tmp))
  }
  let setupSeconds: number | undefined
  if (!fresh(zkey, compiled.r1cs)) {
    const native = loadNativeProver()
    if (!native.ok) throw new Error(`the benchmark's keys come from the native development setup: ${native.reason}`)
    options.log?.(`development key of ${circuit.name}`)
    const t = performance.now()
    await atomically(zkey, async (tmp) => {
      await setUpDevelopmentKey(native.addon, compiled.r1cs, tmp, { threads: options.threads ?? availableParallelism() })
    })
    setupSeconds = (performance.now() - t) / 1000
  }
  if (!fresh(vkey, zkey)) {
    const key = await snarkjs.zKey.exportVerificationKey(zkey)
    writeFileSync(vkey, JSON.stringify(key))
  }
  return { ...compiled, circuit, input, wtns, zkey, vkey, zkeyBytes: statSync(zkey).size, setupSeconds }
}
