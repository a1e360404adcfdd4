// Development-setup benchmark (not a test): pnpm bench packages/proving/bench/setup.ts [--sizes 16,18,20] [--threads 2] [--snarkjs-up-to 0]
//
// The native development setup (setupDevelopment: fresh toxic waste → snarkjs-format zkey) on
// synthetic circuits whose domain is 2^k: 2^k − 100 constraints of the shape circom emits most,
// (x + c)·y = w with random 254-bit coefficients, 2^k wires, 2 public signals; the r1cs is written to
// a temp file first (not timed). Prints per size: constraints, wires, zkey size, the setup's wall
// time and its phases (scalars: r1cs walk + Lagrange + u/v/w; tables; points: every section's
// fixed-base multiplications, the circuit hash and the writing), the CPU time of all its threads,
// and the peak RSS of the process it ran in (a child: Node's baseline + the setup).
// --snarkjs-up-to k also times snarkjs's newZKey + contribute against a development ptau of power
// k + 1 made beforehand (not timed), for sizes up to k.
import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs"
import { randomBytes } from "node:crypto"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import * as snarkjs from "snarkjs"
import type { DevelopmentSetup } from "@mzk/prover-native"
import { nativeDevelopmentSetup } from "../src/build/developmentSetup.mjs"

const arg = (name: string, fallback: string) => {
  const at = process.argv.indexOf(name)
  return at > 0 ? process.argv[at + 1]! : fallback
}
// --smoke (CI's check that the bench runs, scripts/test/benchSmoke.test.ts): one 2^8 circuit on one thread.
const SMOKE = process.argv.includes("--smoke")
const SIZES = arg("--sizes", SMOKE ? "8" : "16,18,20").split(",").map(Number)
const THREADS = Number(arg("--threads", SMOKE ? "1" : "2"))
const SNARKJS_UP_TO = Number(arg("--snarkjs-up-to", "0"))

const addon = nativeDevelopmentSetup()
if (addon === undefined) throw new Error("the native addon is not built: nothing to measure")
const SETUP_MODULE = pathToFileURL(fileURLToPath(new URL("../src/build/developmentSetup.mjs", import.meta.url))).href
const CHILD = `
import { nativeDevelopmentSetup, setUpDevelopmentKey } from ${JSON.stringify(SETUP_MODULE)}
const [r1cs, zkey, threads] = process.argv.slice(1)
const started = performance.now()
const cpu0 = process.cpuUsage()
const result = await setUpDevelopmentKey(nativeDevelopmentSetup(), r1cs, zkey, { threads: Number(threads) })
const seconds = (performance.now() - started) / 1000
const cpu = process.cpuUsage(cpu0)
process.stdout.write(JSON.stringify({ result, seconds, cpuSeconds: (cpu.user + cpu.system) / 1e6, maxRSS: process.resourceUsage().maxRSS }))
`

/** A synthetic r1cs with 2^k − 100 constraints over 2^k wires, written straight into one buffer. */
const r1csOf = (k: number) => {
  const nWires = 2 ** k
  const nConstraints = nWires - 100
  const nOut = 1, nPubIn = 1, nPrvIn = 2
  const perConstraint = 4 * 3 + 36 * 4 // A: 2 terms, B: 1, C: 1
  const constraintsSize = nConstraints * perConstraint
  const size = 12 + (12 + 64) + (12 + constraintsSize) + (12 + 8 * nWires)
  const buf = Buffer.alloc(size)
  let o = 0
  const w32 = (v: number) => (o = buf.writeUInt32LE(v, o))
  const w64 = (v: number) => (o = buf.writeBigUInt64LE(BigInt(v), o))
  const R = [0x43e1f593f0000001n, 0x2833e84879b97091n, 0xb85045b68181585dn, 0x30644e72e131a029n]
  buf.write("r1cs", 0, "latin1")
  o = 4
  for (const v of [1, 3, 1]) w32(v) // version, sections; section 1 (header) follows
  w64(64)
  w32(32)
  for (const limb of R) o = buf.writeBigUInt64LE(limb, o)
  for (const v of [nWires, nOut, nPubIn, nPrvIn]) w32(v)
  w64(nWires)
  w32(nConstraints)
  w32(2)
  w64(constraintsSize)
  const random = randomBytes(nConstraints * 3 * 32)
  let r = 0
  const coef = () => {
    random.copy(buf, o, r, r + 32)
    buf[o + 31]! &= 0x0f // below 2^252 < r
    o += 32
    r += 32
  }
  const firstMul = 1 + nOut + nPubIn + nPrvIn
  for (let c = 0; c < nConstraints; c++) {
    const w = Math.min(firstMul + c, nWires - 1)
    const earlier = () => 1 + Math.floor(Math.random() * Math.max(1, w - 1))
    // A: x·a + 1·c; B: y·b; C: w·1
    w32(2)
    w32(earlier())
    coef()
    w32(0)
    coef()
    w32(1)
    w32(earlier())
    coef()
    w32(1)
    w32(w)
    buf.fill(0, o, o + 32)
    buf[o] = 1
    o += 32
  }
  w32(3)
  w64(8 * nWires)
  for (let i = 0; i < nWires; i++) w64(i)
  return { bytes: buf, nConstraints, nWires }
}

const dir = mkdtempSync(join(tmpdir(), "mzk-setup-bench-"))
const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(0)
try {
  console.log(`native development setup, ${THREADS} thread(s), kernel ${addon.kernel}`)
  console.log("| domain | constraints | wires | zkey MB | setup s | CPU s | scalars s | tables s | points s | peak RSS MB | snarkjs s |")
  console.log("|---|---|---|---|---|---|---|---|---|---|---|")
  for (const k of SIZES) {
    const { bytes, nConstraints, nWires } = r1csOf(k)
    const r1cs = join(dir, `c${k}.r1cs`)
    const zkey = join(dir, `c${k}.zkey`)
    writeFileSync(r1cs, bytes)
    // In a child process, so its peak RSS is the setup's own (plus Node's baseline), not this script's buffers.
    const child = spawnSync(process.execPath, ["--input-type=module", "-e", CHILD, r1cs, zkey, String(THREADS)], { encoding: "utf8" })
    if (child.status !== 0) throw new Error(`the setup failed: ${child.stderr}`)
    const { result, seconds, cpuSeconds, maxRSS } = JSON.parse(child.stdout) as {
      result: DevelopmentSetup
      seconds: number
      cpuSeconds: number
      maxRSS: number
    }
    if (result.domainSize !== 2 ** k) throw new Error(`domain ${result.domainSize}, expected 2^${k}`)
    let snarkjsSeconds = "–"
    if (k <= SNARKJS_UP_TO) {
      const curve = await snarkjs.curves.getCurveFromName("bn128")
      const p = (s: string) => join(dir, `p${k}_${s}.ptau`)
      await snarkjs.powersOfTau.newAccumulator(curve, k + 1, p("0"))
      await snarkjs.powersOfTau.contribute(p("0"), p("1"), "bench", "bench entropy")
      await snarkjs.powersOfTau.preparePhase2(p("1"), p("final"))
      const t = performance.now()
      await snarkjs.zKey.newZKey(r1cs, p("final"), join(dir, "z0.zkey"))
      await snarkjs.zKey.contribute(join(dir, "z0.zkey"), join(dir, "z1.zkey"), "bench", "bench entropy")
      snarkjsSeconds = ((performance.now() - t) / 1000).toFixed(1)
      await curve.terminate()
    }
    const s = (ms: number) => (ms / 1000).toFixed(1)
    console.log(
      `| 2^${k} | ${nConstraints} | ${nWires} | ${mb(statSync(zkey).size)} | ${seconds.toFixed(1)} | ${cpuSeconds.toFixed(1)} | ${s(result.ms.scalars)} | ${s(result.ms.tables)} | ${s(result.ms.points)} | ${mb(maxRSS * 1024)} | ${snarkjsSeconds} |`
    )
    rmSync(zkey, { force: true })
    rmSync(r1cs, { force: true })
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
}
