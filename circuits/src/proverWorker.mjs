// One prover thread of the pool in prover.ts. Plain JavaScript on purpose: `new Worker(url)` loads
// it as is, under vitest, tsx and plain node alike, with no TypeScript loader in the thread.
//
// It loads everything once and keeps it: one witness calculator per circuit, the proving keys and
// the verification keys. A proof then costs witness calculation (circom's WebAssembly) plus the
// Groth16 prover, never file reads or WebAssembly compilation. The prover is either the native
// addon (@mzk/prover-native: zkeys parsed once per process, in native memory, shared by every
// thread) or snarkjs (a single-threaded bn128 curve per thread).
import { loadNativeProver } from "@mzk/prover-native"
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { pathToFileURL } from "node:url"
import { parentPort, workerData } from "node:worker_threads"
import * as snarkjs from "snarkjs"

// snarkjs's own dependencies, resolved from snarkjs so they are the very modules it uses (the ES
// module builds: `main.js` next to `build/main.cjs`).
const fromSnarkjs = createRequire(createRequire(import.meta.url).resolve("snarkjs"))
const esm = (name) => import(pathToFileURL(join(dirname(fromSnarkjs.resolve(name)), "..", "main.js")).href)
const { WitnessCalculatorBuilder } = await esm("circom_runtime")
const { buildBn128 } = await esm("ffjavascript")

// The witness calculator prints every failed assertion to stderr before it throws; the error is
// reported to the caller instead, so only that exact line is dropped.
const consoleError = globalThis.console.error
globalThis.console.error = (...args) => {
  if (args[0] === "ERROR: ") return
  consoleError(...args)
}

const native = workerData.engine === "native" ? loadNativeProver() : undefined
if (native !== undefined && !native.ok) throw new Error(native.reason)
const addon = native?.addon ?? (workerData.priority !== "normal" ? optionalAddon() : undefined)

function optionalAddon() {
  const loaded = loadNativeProver()
  return loaded.ok ? loaded.addon : undefined
}

// Proving yields to the rest of the process (the HTTP API) on a busy machine: this thread, and the
// threads the native prover starts from it, run at a lower priority (idle: SCHED_IDLE, and nice 19
// where that is refused; low: nice 10).
if (workerData.priority === "idle") addon?.setThreadPriority(19, true)
if (workerData.priority === "low") addon?.setThreadPriority(10)

// One thread per pool slot: a single-threaded curve, so the pool size is the number of busy cores
// (ffjavascript would otherwise start a thread per core in every pool thread). snarkjs looks the
// curve up in this global, so the prover and verifier find it already built. The native engine
// needs it only to verify, so it builds it on first use.
let curve
const ensureCurve = async () => {
  if (workerData.singleThreadedCurve && curve === undefined) globalThis.curve_bn128 = curve = await buildBn128(true)
}
if (addon === undefined || workerData.engine !== "native") await ensureCurve()

const circuits = new Map()
for (const c of workerData.circuits) {
  const zkeyBytes = readFileSync(c.zkey)
  circuits.set(c.name, {
    calculator: await WitnessCalculatorBuilder(readFileSync(c.wasm)),
    zkey: workerData.engine === "native" ? undefined : new Uint8Array(zkeyBytes),
    handle: workerData.engine === "native" ? addon.loadZkey(zkeyBytes, { threads: workerData.loadThreads }) : undefined,
    vkey: JSON.parse(readFileSync(c.vkey, "utf8"))
  })
}

const cancel = workerData.cancelFlag

const INVALID_INPUTS = /Not all inputs have been set|Too many values|Not enough values|Signal not found|Cannot convert|Input signal array access/

const classify = (error) => {
  const message = String(error?.message ?? error)
  if (error?.code === "MZK_CANCELLED") return { code: "timeout", message: "Proof generation was cancelled" }
  if (/Assert Failed/.test(message)) return { code: "constraint_violation", message: firstLine(message) }
  if (INVALID_INPUTS.test(message)) return { code: "invalid_inputs", message: firstLine(message) }
  return { code: "internal", message: firstLine(message) }
}
const firstLine = (text) => (text.split("\n").find((l) => l.trim() !== "")?.trim() ?? "unknown error").replace(/^Error:\s*/, "")

const handlers = {
  async prove({ circuit, inputs }) {
    const c = circuits.get(circuit)
    if (c === undefined) return { ok: false, code: "invalid_inputs", message: `Unknown circuit ${circuit}` }
    const wtns = await c.calculator.calculateWTNSBin(inputs, 0)
    if (c.handle !== undefined) {
      Atomics.store(cancel, 0, 0)
      const { proof, publicSignals } = addon.prove(c.handle, wtns, { threads: workerData.threadsPerProof, cancel })
      return { ok: true, proof, publicSignals }
    }
    const { proof, publicSignals } = await snarkjs.groth16.prove(c.zkey, wtns)
    return { ok: true, proof, publicSignals }
  },
  async verify({ circuit, proof, publicSignals }) {
    const c = circuits.get(circuit)
    if (c === undefined) return { ok: false, code: "invalid_inputs", message: `Unknown circuit ${circuit}` }
    await ensureCurve()
    let valid
    try {
      valid = await snarkjs.groth16.verify(c.vkey, publicSignals, proof)
    } catch {
      // A malformed proof (points off the curve, wrong shape) is simply not a valid proof.
      valid = false
    }
    return { ok: true, valid }
  }
}

parentPort.on("message", async (message) => {
  let reply
  try {
    reply = await handlers[message.op](message)
  } catch (error) {
    reply = { ok: false, ...classify(error) }
  }
  parentPort.postMessage({ id: message.id, ...reply })
})

parentPort.postMessage({ ready: true })
