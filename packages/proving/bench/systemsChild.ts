// One setup or one prover of systems.ts in a process of its own, so its peak RSS is its own.
//   systemsChild.ts setup <groth16-dev | groth16-phase2 | groth16-snarkjs | plonk | fflonk> <r1cs> <ptau | -> <zkey out> <threads>
//   systemsChild.ts prove <native | groth16 | plonk | fflonk> <zkey> <wtns> <runs> <threads>
// Prints one JSON line: wall and CPU (every thread of this process) in ms per run, the first
// proof and its public signals (the parent verifies them), and the process's peak RSS (VmHWM).
import { loadNativeProver } from "@mzk/prover-native"
import { randomBytes } from "node:crypto"
import { readFileSync, rmSync } from "node:fs"
import * as snarkjs from "snarkjs"
import { setUpDevelopmentKey } from "../src/build/developmentSetup.mjs"
import { contributeNative } from "../src/build/phase2.mjs"

type Proved = { proof: unknown; publicSignals: ReadonlyArray<string> }
/** snarkjs's PLONK and FFLONK entry points (src/snarkjs.d.ts declares Groth16 only). */
export const universal = snarkjs as unknown as Record<"plonk" | "fflonk", {
  setup(r1cs: string, ptau: string, zkey: string, logger?: unknown): Promise<unknown>
  prove(zkey: string | Uint8Array, wtns: string | Uint8Array): Promise<Proved>
}>

const [mode, what, a, b, c, d] = process.argv.slice(2) as [string, string, string, string, string, string]
const cpuMs = () => {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1000
}
const peakRssKb = () => Number(/VmHWM:\s+(\d+)/.exec(readFileSync("/proc/self/status", "utf8"))?.[1] ?? 0)
const timed = async <A>(f: () => Promise<A>) => {
  const c0 = cpuMs()
  const t0 = performance.now()
  const value = await f()
  return { value, ms: performance.now() - t0, cpuMs: cpuMs() - c0 }
}
const native = () => {
  const load = loadNativeProver()
  if (!load.ok) throw new Error(`native addon: ${load.reason}`)
  return load.addon
}

let result: Record<string, unknown>
if (mode === "setup") {
  const [r1cs, ptau, zkey, threads] = [a, b, c, Number(d)]
  // snarkjs's setups return -1 (PLONK) or throw (FFLONK) when the ptau does not fit; either fails the run.
  const run = {
    "groth16-dev": () => setUpDevelopmentKey(native(), r1cs, zkey, { threads }),
    "groth16-phase2": () => contributeNative({ r1cs, ptau, zkey, threads, name: "systems benchmark" }),
    // Without the addon: snarkjs's zkey new and one contribution, as the build does then.
    "groth16-snarkjs": async () => {
      await snarkjs.zKey.newZKey(r1cs, ptau, `${zkey}.0`)
      await snarkjs.zKey.contribute(`${zkey}.0`, zkey, "systems benchmark", randomBytes(32).toString("hex"))
      rmSync(`${zkey}.0`)
    },
    plonk: async () => {
      if ((await universal.plonk.setup(r1cs, ptau, zkey)) === -1) throw new Error("PLONK setup refused the ptau")
    },
    fflonk: () => universal.fflonk.setup(r1cs, ptau, zkey),
  }[what]
  if (run === undefined) throw new Error(`no setup ${what}`)
  const t = await timed(async () => {
    await run()
  })
  result = { ms: t.ms, cpuMs: t.cpuMs, peakRssKb: peakRssKb() }
} else {
  const [zkeyFile, wtnsFile, runs, threads] = [a, b, Number(c), Number(d)]
  const zkey = new Uint8Array(readFileSync(zkeyFile))
  const wtns = new Uint8Array(readFileSync(wtnsFile))
  let prove: () => Promise<Proved>
  if (what === "native") {
    const addon = native()
    const handle = addon.loadZkey(zkey, { threads, cache: false })
    prove = async () => addon.prove(handle, wtns, { threads })
  } else if (what === "groth16") prove = () => snarkjs.groth16.prove(zkey, wtns)
  else if (what === "plonk" || what === "fflonk") prove = () => universal[what].prove(zkey, wtns)
  else throw new Error(`no prover ${what}`)
  const ms: Array<number> = []
  const cpu: Array<number> = []
  let first: Proved | undefined
  for (let i = 0; i < runs; i++) {
    const t = await timed(prove)
    ms.push(t.ms)
    cpu.push(t.cpuMs)
    first ??= t.value
  }
  result = { ms, cpuMs: cpu, proof: first!.proof, publicSignals: first!.publicSignals, peakRssKb: peakRssKb() }
}
await (globalThis as { curve_bn128?: { terminate(): Promise<void> } | null }).curve_bn128?.terminate()
process.stdout.write(`\n${JSON.stringify(result)}\n`)
process.exit(0)
