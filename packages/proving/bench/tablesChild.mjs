// One fresh process of packages/proving/bench/tables.ts: loads a key (argv: zkey, sha256, wtns, options
// JSON, proofs, threads), proves it `proofs` times and prints one JSON line: load ms, each proof's
// wall and CPU ms, the key's info, and peak / current RSS of the whole process (VmHWM, VmRSS) and its growth
// over the RSS before the load.
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { performance } from "node:perf_hooks"
import process from "node:process"

const require = createRequire(import.meta.url)
const { loadNativeProver } = require("@mzk/prover-native")
const [zkey, digest, wtnsPath, optionsJson, proofs, threads] = process.argv.slice(2)
const native = loadNativeProver()
if (!native.ok) throw new Error(native.reason)
const addon = native.addon
const wtns = new Uint8Array(readFileSync(wtnsPath))
const kib = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync("/proc/self/status", "utf8"))?.[1]) * 1024
const rssBefore = kib("VmRSS")
let t = performance.now()
let handle
try {
  handle = addon.loadZkeyFile(zkey, { sha256: digest, ...JSON.parse(optionsJson) })
} catch (error) {
  process.stdout.write(JSON.stringify({ error: error.message, code: error.code }) + "\n")
  process.exit(0)
}
const loadMs = performance.now() - t
const proveMs = []
// Process CPU time per proof too: on a shared machine wall time moves with the load.
const proveCpuMs = []
const cpu = () => {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1000
}
for (let i = 0; i < Number(proofs); i++) {
  t = performance.now()
  const c = cpu()
  addon.prove(handle, wtns, { threads: Number(threads) })
  proveMs.push(performance.now() - t)
  proveCpuMs.push(cpu() - c)
}
const peak = kib("VmHWM")
process.stdout.write(JSON.stringify({ loadMs, proveMs, proveCpuMs, info: addon.zkeyInfo(handle), peak, rssBefore, growth: peak - rssBefore }) + "\n")
