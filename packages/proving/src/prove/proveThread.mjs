// One prover thread of the pool in pool.ts. Plain JavaScript on purpose: `new Worker(url)` loads
// it as is, under vitest, tsx and plain node alike, with no TypeScript loader in the thread; its
// messages are typed in messages.ts, which threads.ts uses too.
// @ts-check
//
// Circuits are loaded on demand, by the digests of their wasm and zkey, and kept in a least
// recently used cache under this thread's memory budget: one witness calculator per circuit plus
// its proving key (native: parsed once per process, in native memory, shared by every thread that
// holds it; snarkjs: the zkey bytes). A proof of a circuit in the cache costs witness calculation
// (circom's WebAssembly) plus the Groth16 prover, never file reads or WebAssembly compilation.
import { loadNativeProver } from "@mzk/prover-native"
import { createHash } from "node:crypto"
import { readFileSync, statSync } from "node:fs"
import { performance } from "node:perf_hooks"
import { parentPort, workerData } from "node:worker_threads"
import { snarkjsDependency } from "../snarkjsDeps.mjs"
import { makeVerifyingKeys } from "../verify/verifyingKeys.mjs"
import { WASM_PAGE, withMemoryCeiling } from "../wasmMemory.mjs"
import * as snarkjs from "snarkjs"

/**
 * @typedef {import("./messages.js").ProverThreadData} ProverThreadData
 * @typedef {import("./messages.js").ProverJobMessage} ProverJobMessage
 * @typedef {import("./messages.js").ProverAnswer} ProverAnswer
 * @typedef {import("./messages.js").CircuitFiles} CircuitFiles
 * @typedef {import("./messages.js").ThreadStats} ThreadStats
 * @typedef {import("@mzk/prover-native").ZkeyHandle} ZkeyHandle
 *
 * What this thread uses of circom_runtime's witness calculator (it ships no types).
 * @typedef {{
 *   calculateWTNSBin(inputs: Record<string, unknown>, sanityCheck: number): Promise<Uint8Array>
 *   readonly instance?: { readonly exports?: { readonly memory?: { readonly buffer?: ArrayBuffer } } }
 * }} WitnessCalculator
 *
 * A circuit held by this thread.
 * @typedef {{
 *   system: CircuitFiles["system"]
 *   calculator: WitnessCalculator
 *   zkey: Uint8Array | undefined
 *   handle: ZkeyHandle | undefined
 *   bytes: number
 * }} Entry
 *
 * What this thread uses of snarkjs's provers and verifiers.
 * @typedef {{
 *   prove(zkey: Uint8Array | undefined, witness: Uint8Array): Promise<{ proof: import("@mzk/core").SnarkjsProof; publicSignals: Array<string> }>
 *   verify(vkey: unknown, publicSignals: ReadonlyArray<string>, proof: unknown, logger?: object): Promise<boolean>
 * }} SnarkjsSystem
 */

const data = /** @type {ProverThreadData} */ (workerData)
// Started as a worker by threads.ts: never without a parent port.
const port = /** @type {import("node:worker_threads").MessagePort} */ (parentPort)
/** @type {Readonly<Record<"groth16" | "plonk" | "fflonk", SnarkjsSystem>>} */
const SNARKJS = /** @type {any} snarkjs ships no types for its provers */ (snarkjs)

/** @type {{ WitnessCalculatorBuilder: (wasm: Uint8Array) => Promise<WitnessCalculator> }} */
const { WitnessCalculatorBuilder } = await snarkjsDependency("circom_runtime")
const { buildBn128 } = await snarkjsDependency("ffjavascript")

// The witness calculator prints every failed assertion to stderr before it throws; the error is
// reported to the caller instead, so only that exact line is dropped.
const consoleError = globalThis.console.error
globalThis.console.error = (/** @type {unknown[]} */ ...args) => {
  if (args[0] === "ERROR: ") return
  consoleError(...args)
}

const native = data.engine === "native" ? loadNativeProver() : undefined
if (native !== undefined && !native.ok) throw new Error(native.reason)
const addon = native?.ok ? native.addon : data.priority !== "normal" ? optionalAddon() : undefined

/** The addon for setting this thread's priority, where it loads. */
function optionalAddon() {
  const loaded = loadNativeProver()
  return loaded.ok ? loaded.addon : undefined
}

// Proving yields to the rest of the process (the HTTP API) on a busy machine: this thread, and the
// threads the native prover starts from it, run at a lower priority (idle: SCHED_IDLE, and nice 19
// where that is refused; low: nice 10).
if (data.priority === "idle") addon?.setThreadPriority(19, true)
if (data.priority === "low") addon?.setThreadPriority(10)

// One thread per pool slot: a single-threaded curve, so the pool size is the number of busy cores
// (ffjavascript would otherwise start a thread per core in every pool thread). snarkjs looks the
// curve up in this global, so the prover and verifier find it already built. The native engine
// proves and verifies without it.
/** @type {unknown} */
let curve
const ensureCurve = async () => {
  if (data.singleThreadedCurve && curve === undefined) {
    curve = await buildBn128(true)
    Object.assign(globalThis, { curve_bn128: curve })
  }
}
if (addon === undefined || data.engine !== "native") await ensureCurve()

/**
 * @param {CircuitFiles["system"]} system
 * @returns {system is "plonk" | "fflonk"}
 */
const isUniversal = (system) => system === "plonk" || system === "fflonk"

/** A file that does not hold the bytes of its digest: the pool drops it from the disk cache and retries. */
class CorruptArtifact extends Error {
  /** @param {import("@mzk/core").Digest} digest */
  constructor(digest) {
    super(`artifact ${digest} does not match its digest`)
    this.digest = digest
  }
}

/** @param {CircuitFiles["wasm"]} file */
const readChecked = ({ digest, path }) => {
  const bytes = readFileSync(path)
  if (createHash("sha256").update(bytes).digest("hex") !== digest) throw new CorruptArtifact(digest)
  return bytes
}

/**
 * @param {import("@mzk/prover-native").NativeProverAddon} native
 * @param {CircuitFiles["zkey"]} file
 */
const loadNativeKey = (native, { digest, path }) => {
  try {
    return native.loadZkeyFile(path, {
      sha256: digest,
      threads: data.loadThreads,
      tableBudgetMB: data.tableBudgetMB,
      memoryBudgetMB: data.memoryBudgetMB,
      proofsInFlight: data.proofsInFlight,
      // The pool loads a circuit larger than its budget anyway, alone (its eviction makes room).
      overBudget: "least",
      tableCacheDir: data.tableCacheDir
    })
  } catch (error) {
    if (error instanceof Error && "code" in error && error.code === "MZK_DIGEST_MISMATCH") throw new CorruptArtifact(digest)
    throw error
  }
}

// Insertion order is recency: a hit moves its entry to the end, eviction takes from the front.
/** @type {Map<string, Entry>} */
const loaded = new Map()
const counters = { loads: 0, hits: 0, evictions: 0 }
let residentBytes = 0

/** @returns {ThreadStats} */
const stats = () => ({ ...counters, entries: loaded.size, bytes: residentBytes })

/** @param {string} key */
const unload = (key) => {
  const entry = loaded.get(key)
  if (entry === undefined) return
  loaded.delete(key)
  residentBytes -= entry.bytes
  counters.evictions++
  // Native keys are freed now (once no other thread holds them), not at some later collection.
  if (entry.handle !== undefined) addon?.unloadZkey(entry.handle)
}

/**
 * Evicts the least recently used circuits until `incoming` more bytes fit (or nothing is left).
 * @param {number} incoming
 * @param {string} keep
 */
const makeRoom = (incoming, keep) => {
  for (const key of loaded.keys()) {
    if (residentBytes + incoming <= data.memoryBudgetBytes) return
    if (key !== keep) unload(key)
  }
}

/** The circuit's calculator and key: from the cache, else loaded from its files. */
// A witness generator may use the thread's memory budget, and at least 256 MiB (a budget set low to
// keep few circuits loaded should not fail the circuits themselves), at most wasm32's 4 GiB.
const WITNESS_MEMORY_PAGES = Math.min(65536, Math.max(4096, Math.floor(data.memoryBudgetBytes / WASM_PAGE)))

// PLONK and FFLONK keys are proven by snarkjs in any engine (the native prover is Groth16's).
/**
 * @param {CircuitFiles} circuit
 * @returns {Promise<Entry>}
 */
const circuitOf = async ({ wasm, zkey, system = "groth16" }) => {
  const key = `${wasm.digest}:${zkey.digest}`
  const cached = loaded.get(key)
  if (cached !== undefined) {
    loaded.delete(key)
    loaded.set(key, cached)
    counters.hits++
    return cached
  }
  const nativeAddon = data.engine === "native" && system === "groth16" ? addon : undefined
  const isNative = nativeAddon !== undefined
  const wasmBytes = readChecked(wasm)
  // The native engine reads the key itself (mapped, hashed against its digest, never copied into
  // this heap), and not at all when another thread of the process holds it already.
  const zkeyBytes = isNative ? undefined : readChecked(zkey)
  const zkeySize = zkeyBytes?.length ?? statSync(zkey.path).size
  // Room is made before loading, from the file sizes, so the old and the new never peak together.
  makeRoom(wasmBytes.length + zkeySize, key)
  const calculator = await WitnessCalculatorBuilder(withMemoryCeiling(wasmBytes, WITNESS_MEMORY_PAGES))
  const handle = nativeAddon === undefined ? undefined : loadNativeKey(nativeAddon, zkey)
  /** @type {Entry} */
  const entry = {
    system,
    calculator,
    zkey: zkeyBytes === undefined ? undefined : new Uint8Array(zkeyBytes),
    handle,
    // What the circuit keeps alive in this thread; a native key is counted in full by every thread
    // that holds it, though the process has one copy.
    bytes: wasmBytes.length + (calculator.instance?.exports?.memory?.buffer?.byteLength ?? 0) + zkeySize +
      (nativeAddon !== undefined && handle !== undefined ? nativeAddon.zkeyInfo(handle).tableBytes : 0)
  }
  makeRoom(entry.bytes, key)
  loaded.set(key, entry)
  residentBytes += entry.bytes
  counters.loads++
  return entry
}

// Warm start: the circuits the pool names (the built-in ones) are loaded before the thread says it
// is ready, so their first proofs cost no more than the next ones.
for (const circuit of data.preload) await circuitOf(circuit)

const cancel = data.cancelFlag

const INVALID_INPUTS = /Not all inputs have been set|Too many values|Not enough values|Signal not found|Cannot convert|Input signal array access/

/**
 * @param {unknown} error
 * @returns {{ code: import("@mzk/core").ProverFailure["code"]; message: string }}
 */
const classify = (error) => {
  const message = error instanceof Error ? error.message : String(error)
  if (error instanceof Error && "code" in error && error.code === "MZK_CANCELLED") return { code: "timeout", message: "Proof generation was cancelled" }
  if (/Assert Failed/.test(message)) return { code: "constraint_violation", message: firstLine(message) }
  if (INVALID_INPUTS.test(message)) return { code: "invalid_inputs", message: firstLine(message) }
  return { code: "internal", message: firstLine(message) }
}
/** @param {string} text */
const firstLine = (text) => (text.split("\n").find((l) => l.trim() !== "")?.trim() ?? "unknown error").replace(/^Error:\s*/, "")

// Verification: on the native engine, the addon's verifier (one final exponentiation, about 1 ms
// instead of snarkjs's 14); snarkjs otherwise (MZK_PROVER_ENGINE=snarkjs, or no addon). Prepared keys
// are kept per thread (verifyingKeys.mjs), up to 64; a key the addon refuses verifies nothing.
const nativeVerifier = data.engine === "native" ? addon : undefined
const verifyingKeyOf = nativeVerifier === undefined ? undefined : makeVerifyingKeys(nativeVerifier, 64)

// snarkjs's PLONK/FFLONK verifiers log a failed check as an error; a false answer says it.
const quiet = { debug() {}, info() {}, warn() {}, error() {} }

/**
 * One function per job, each answering as messages.ts says.
 * @type {{ [Op in ProverJobMessage["op"]]: (job: Extract<ProverJobMessage, { op: Op }>) => Promise<ProverAnswer> }}
 */
const handlers = {
  async prove({ circuit, inputs }) {
    const c = await circuitOf(circuit)
    const wtns = await c.calculator.calculateWTNSBin(inputs, 0)
    if (c.handle !== undefined && addon !== undefined) {
      Atomics.store(cancel, 0, 0)
      const { proof, publicSignals } = addon.prove(c.handle, wtns, { threads: data.threadsPerProof, cancel })
      return { ok: true, proof: { ...proof }, publicSignals }
    }
    if (isUniversal(c.system)) {
      await ensureCurve()
      const { proof, publicSignals } = await SNARKJS[c.system].prove(c.zkey, wtns)
      return { ok: true, proof, publicSignals }
    }
    const { proof, publicSignals } = await SNARKJS.groth16.prove(c.zkey, wtns)
    return { ok: true, proof, publicSignals }
  },
  async verify({ vkey, proof, publicSignals, system = "groth16" }) {
    if (isUniversal(system)) {
      await ensureCurve()
      let valid
      try {
        // The key's protocol must be the proof's: snarkjs would read a Groth16 key as best it can.
        const keyProtocol = typeof vkey === "object" && vkey !== null && "protocol" in vkey ? vkey.protocol : undefined
        valid = keyProtocol === system && proof?.protocol === system && (await SNARKJS[system].verify(vkey, publicSignals, proof, quiet))
      } catch {
        valid = false
      }
      return { ok: true, valid: valid === true }
    }
    if (nativeVerifier !== undefined) {
      const key = verifyingKeyOf?.(/** @type {import("@mzk/prover-native").Groth16VerificationKey} */ (vkey))
      // The addon checks the proof's shape itself: a malformed one is not valid.
      const groth16 = /** @type {import("@mzk/prover-native").Groth16Proof} */ (/** @type {unknown} */ (proof))
      return { ok: true, valid: key !== undefined && nativeVerifier.verifyGroth16(key, groth16, publicSignals) }
    }
    await ensureCurve()
    let valid
    try {
      valid = await snarkjs.groth16.verify(vkey, publicSignals, proof)
    } catch {
      // A malformed proof (points off the curve, wrong shape) is simply not a valid proof.
      valid = false
    }
    return { ok: true, valid }
  }
}

port.on("message", async (/** @type {ProverJobMessage} */ message) => {
  // This thread's own time on the job, answered or failed: a proof's proving_ms. Measured here, so
  // it never counts the wait for a thread nor the pool's start.
  const started = performance.now()
  /** @type {ProverAnswer} */
  let reply
  try {
    // The op selects its own handler; TypeScript cannot follow the pairing through the union.
    reply = await handlers[message.op](/** @type {never} */ (message))
  } catch (error) {
    reply = error instanceof CorruptArtifact
      ? { ok: false, code: "internal", message: error.message, corrupt: error.digest }
      : { ok: false, ...classify(error) }
  }
  port.postMessage({ id: message.id, ...reply, elapsedMs: performance.now() - started, stats: stats() })
})

/** @type {import("./messages.js").ProverReady} */
const ready = { ready: true, stats: stats() }
port.postMessage(ready)
