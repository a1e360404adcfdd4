import {
  type Circuit,
  type CircuitInputs,
  type Digest,
  Prover,
  ProverFailure,
  type ProverOutput,
  type ProvingSystem,
  type SnarkjsProof,
  validateCircuitInputs
} from "@mzk/core"
import { loadNativeProver } from "@mzk/prover-native"
import { Config, ConfigError, Duration, Effect, Either, Layer, Option, Queue, Schedule, Schema, type Scope } from "effect"
import { readFileSync, statSync } from "node:fs"
import { availableParallelism } from "node:os"
import { Worker } from "node:worker_threads"
import { ArtifactFiles } from "../artifacts/files.js"
import { chooseEngine, type ProverEngine, ProverEngineConfig } from "./engine.js"
import { parseBytes } from "../bytes.js"
import { BUILTIN_CIRCUITS, builtinCircuit } from "../catalog.js"
import { wasmPages } from "../build/compiler.js"
import { snarkjsThreadData } from "../snarkjsDeps.mjs"
import {
  type NoirProgram,
  proveUltraHonk,
  publicSignalsDecimal,
  UltraHonkError,
  ultraHonkProofRecord,
  verifyUltraHonkRecord
} from "../noir/index.js"

export { chooseEngine, type EngineChoice, type ProverEngine, ProverEngineConfig } from "./engine.js"

export interface ProverPoolOptions {
  /** Prover threads; each proves one proof at a time. Default: the core count. */
  readonly poolSize?: number
  /** Per-proof limit, after which the thread is killed and replaced. Default 60 s. */
  readonly timeout?: Duration.DurationInput
  /**
   * PLONK and FFLONK proofs' own limit (snarkjs proves them, several times slower than a Groth16
   * proof of the same circuit). Default 120 s.
   */
  readonly universalTimeout?: Duration.DurationInput
  /**
   * PLONK and FFLONK proofs' memory ceiling, bytes: snarkjs holds the whole key and polynomials
   * several times its domain, so a key whose estimated need (`UNIVERSAL_MEMORY_FACTOR` × the zkey's
   * size) exceeds it is refused before it is loaded, rather than exhausting the thread's memory.
   * Default: the thread's memory budget (`memoryBudgetBytes`).
   */
  readonly universalMemoryBytes?: number
  /**
   * The UltraHonk CRS directory Noir programs are proven against (the compiler's `noirCrs`); without
   * it an `ultra_honk` proof fails with `internal` naming the setting.
   */
  readonly noirCrs?: string
  /** UltraHonk proofs' own limit (bb.js proves them, in wasm). Default 120 s. */
  readonly ultraHonkTimeout?: Duration.DurationInput
  /**
   * UltraHonk proofs' memory ceiling, bytes: Barretenberg's wasm memory may not grow past it (a
   * proof that needs more fails). Default: the thread's memory budget (`memoryBudgetBytes`).
   */
  readonly ultraHonkMemoryBytes?: number
  /**
   * Built-in circuits every thread loads before the pool starts, so their first proofs are as
   * fast as the next ones (default: all of them). Any other circuit is loaded on its first proof.
   */
  readonly preload?: ReadonlyArray<string>
  /**
   * What one prover thread may keep loaded, in bytes: witness calculators and proving keys (a
   * native key's tables included), least recently used evicted first. Per thread, so the pool's
   * most is poolSize × this; native keys are shared by the threads that hold them, so usually
   * less. A circuit larger than the budget is still loaded, alone. A native key also never holds
   * more than this in its process (its tables, resident sections and the scratch of poolSize proofs;
   * the formula is in packages/prover-native's README): one whose bases and scratch alone exceed it
   * loads with no tables beyond its bases (zkeyInfo's overBudget). Default: the MZK_PROVER_MEMORY
   * environment variable (bytes, or with a unit: `512MiB`, `2GiB`), else 1 GiB.
   */
  readonly memoryBudgetBytes?: number
  /**
   * Native engine: the most one key's MSM tables may take, bytes (the bases included; within
   * memoryBudgetBytes). Default 64 MiB: keys up to about 2^14 constraints keep every shifted copy
   * (merkle_membership's full tables are 45 MB, so the built-in circuits prove at full speed), a
   * key of 2^16 or more proves from one or two copies of its bases (1.2–1.3× the CPU of full
   * tables at 2^16, and a peak RSS near rapidsnark's at 2^20). Raise it for speed where
   * memory allows; tables are built once per host (the disk cache), so only memory is at stake.
   */
  readonly tableBudgetBytes?: number
  /** The engine (default: the MZK_PROVER_ENGINE environment variable, else `auto`). */
  readonly engine?: ProverEngine
  /**
   * Native engine: threads that work on one proof. Default: the pool's share of the cores,
   * max(1, floor(cores / poolSize)), so a full pool runs one single-threaded proof per core.
   */
  readonly threadsPerProof?: number
  /**
   * The CPU priority of the prover threads (and the threads the native prover starts), so that on
   * a busy machine the rest of the process (the HTTP API) runs first: `idle` (Linux SCHED_IDLE:
   * they run when the process's other threads do not need the CPU), `low` (nice 10) or `normal`.
   * Needs the native addon (on Linux); ignored where it is absent. Default: the
   * MZK_PROVER_PRIORITY environment variable, else `low` (`idle` can starve proving entirely while
   * other work, such as other processes sharing the process's scheduling group, keeps the CPU busy).
   */
  readonly priority?: ProverPriority
}

/** See `ProverPoolOptions.tableBudgetBytes`. */
export const DEFAULT_TABLE_BUDGET = 64 * 2 ** 20

/** See `ProverPoolOptions.priority`. */
export type ProverPriority = "normal" | "low" | "idle"

/** The pool could not start: artifacts missing or a thread failed to load them. */
export class ProverStartupError extends Schema.TaggedError<ProverStartupError>()("ProverStartupError", {
  message: Schema.String
}) {}

/**
 * What the pool's threads hold and did, summed over its threads (`loads`, `hits` and `evictions`
 * include threads since replaced; `entries` and `bytes` are what the live threads hold now).
 */
export interface ProverStats {
  /** Circuits loaded into a thread (preloads included). */
  readonly loads: number
  /** Proofs of a circuit the thread already held. */
  readonly hits: number
  /** Circuits dropped to stay under a thread's memory budget. */
  readonly evictions: number
  readonly entries: number
  readonly bytes: number
}

const NO_STATS: ProverStats = { loads: 0, hits: 0, evictions: 0, entries: 0, bytes: 0 }

type Reply = (
  | { readonly ok: true; readonly proof: SnarkjsProof; readonly publicSignals: ReadonlyArray<string> }
  | { readonly ok: true; readonly valid: boolean }
  | { readonly ok: false; readonly code: ProverFailure["code"]; readonly message: string; readonly corrupt?: Digest }
) & {
  readonly stats?: ProverStats
  /** The thread's own time on the job, milliseconds (absent when the thread stopped instead of answering). */
  readonly elapsedMs?: number
}

/** A circuit's files as a thread loads them: each checked against its digest. */
interface CircuitFiles {
  readonly wasm: { readonly digest: Digest; readonly path: string }
  readonly zkey: { readonly digest: Digest; readonly path: string; readonly size: number }
  readonly system: ProvingSystem
}

/**
 * What snarkjs's PLONK/FFLONK prover holds per byte of zkey, estimated: the key itself, its
 * polynomials in evaluation form (4× and 8× extended domains) and the witness's. Measured on the
 * built-in circuits at 3 to 4× the zkey's size in peak heap; 4 leaves room.
 */
export const UNIVERSAL_MEMORY_FACTOR = 4

const WORKER_URL = new URL("./proveThread.mjs", import.meta.url)


/** MZK_PROVER_PRIORITY: the prover threads' CPU priority. */
export const ProverPriorityConfig: Config.Config<ProverPriority> = Config.literal("normal", "low", "idle")("MZK_PROVER_PRIORITY").pipe(
  Config.withDefault<ProverPriority>("low")
)

export { parseBytes } from "../bytes.js"

export const DEFAULT_PROVER_MEMORY_BYTES = 2 ** 30

/** MZK_PROVER_MEMORY: each prover thread's memory budget for loaded circuits. */
export const ProverMemoryConfig: Config.Config<number> = Config.string("MZK_PROVER_MEMORY").pipe(
  Config.mapOrFail((text) =>
    Option.match(parseBytes(text), {
      onNone: () => Either.left(ConfigError.InvalidData([], `Expected bytes (1073741824, 512MiB, 2GiB), got ${JSON.stringify(text)}`)),
      onSome: (bytes) => Either.right(bytes)
    })
  ),
  Config.withDefault(DEFAULT_PROVER_MEMORY_BYTES)
)


/** One prover thread. It runs one job at a time; the pool hands it out exclusively. */
class Slot {
  private current: ((reply: Reply) => void) | undefined
  private nextId = 0
  /** A job was started and has not answered: the thread may still be burning CPU on it. */
  busy = false
  dead = false
  /** The thread's counters as of its last reply. */
  stats: ProverStats = NO_STATS

  private readonly onMessage = (reply: Reply) => this.settle(reply)
  private readonly onError = (error: Error) => this.crash(error.message)
  private readonly onExit = (code: number) => this.crash(`exit code ${code}`)

  /** `cancelFlag` is shared with the thread: nonzero makes the native prover stop at its next check. */
  constructor(readonly worker: Worker, readonly cancelFlag: Int32Array) {
    worker.on("message", this.onMessage)
    worker.on("error", this.onError)
    worker.on("exit", this.onExit)
    // Idle threads must not keep the process alive; a running job does (see `run`).
    worker.unref()
  }

  /** Asks a native proof in progress to stop (snarkjs cannot be stopped; its thread is terminated). */
  cancel() {
    Atomics.store(this.cancelFlag, 0, 1)
  }

  /** Stops listening, so a deliberate termination is not reported as a crash. */
  detach() {
    this.worker.off("message", this.onMessage)
    this.worker.off("error", this.onError)
    this.worker.off("exit", this.onExit)
  }

  private crash(why: string) {
    this.dead = true
    this.settle({ ok: false, code: "internal", message: `The prover thread stopped: ${why}` })
  }

  private settle(reply: Reply) {
    if (reply.stats !== undefined) this.stats = reply.stats
    const resume = this.current
    this.current = undefined
    this.busy = false
    this.worker.unref()
    resume?.(reply)
  }

  run(message: Record<string, unknown>): Effect.Effect<Reply> {
    return Effect.async<Reply>((resume) => {
      if (this.dead) return resume(Effect.succeed({ ok: false, code: "internal", message: "The prover thread stopped" }))
      this.busy = true
      this.current = (reply) => resume(Effect.succeed(reply))
      this.worker.ref()
      this.worker.postMessage({ ...message, id: this.nextId++ })
    })
  }
}

const spawn = (workerData: Record<string, unknown>, live: Set<Worker>): Effect.Effect<Slot, ProverStartupError> =>
  Effect.async<Slot, ProverStartupError>((resume) => {
    const cancelFlag = new Int32Array(new SharedArrayBuffer(4))
    const worker = new Worker(WORKER_URL, { workerData: { ...workerData, cancelFlag } })
    live.add(worker)
    // Only our own listeners are removed: Node's Worker keeps internal ones that route messages.
    const detach = () => {
      worker.off("message", onMessage)
      worker.off("error", onError)
      worker.off("exit", onExit)
    }
    const fail = (message: string) => {
      detach()
      live.delete(worker)
      void worker.terminate()
      resume(Effect.fail(new ProverStartupError({ message: `A prover thread failed to start: ${message}` })))
    }
    const onMessage = (message: { ready?: boolean; stats?: ProverStats }) => {
      if (message.ready !== true) return
      detach()
      const slot = new Slot(worker, cancelFlag)
      if (message.stats !== undefined) slot.stats = message.stats
      resume(Effect.succeed(slot))
    }
    const onError = (error: Error) => fail(error.message)
    const onExit = (code: number) => fail(`exit code ${code}`)
    worker.on("message", onMessage)
    worker.on("error", onError)
    worker.on("exit", onExit)
    return Effect.sync(() => {
      detach()
      live.delete(worker)
      void worker.terminate()
    })
  })

const failure = (reply: Reply & { ok: false }) =>
  new ProverFailure({ code: reply.code, message: reply.message, ...(reply.elapsedMs === undefined ? {} : { proving_ms: reply.elapsedMs }) })

/**
 * The prover's own check of a proof's inputs (defence in depth: the witness calculator would
 * silently reduce non-canonical values mod r): the core's rule, the one that refused requests
 * before they were queued, as one message naming each bad input by path.
 */
export const checkInputs = (circuit: Circuit, inputs: CircuitInputs): Either.Either<CircuitInputs, string> =>
  Either.mapBoth(validateCircuitInputs(circuit, inputs), {
    onLeft: (details) => details.map((d) => `${d.path}: ${d.message}`).join("; "),
    onRight: (valid) => valid.inputs
  })

/** The Groth16 prover with what its threads hold, for operators and tests. */
export type ProverPool = Prover["Type"] & { readonly stats: Effect.Effect<ProverStats> }

/**
 * The Groth16 `Prover`: a warm pool of worker threads. Each thread loads a circuit on its first
 * proof there (its files found by digest through `ArtifactFiles`: built-in ones from `build/`,
 * uploaded ones from the database through the local disk cache) and keeps the least recently used
 * circuits that fit its memory budget: witness calculators and proving keys (native: parsed once
 * per process and shared; snarkjs: the zkey bytes). The built-in circuits are loaded at start.
 * Verification needs no artifacts: the circuit record carries its key. A job that outlives the
 * timeout (or is interrupted) has its thread cancelled (native), killed and replaced. Closing the
 * scope terminates every thread, so nothing keeps the process alive. Logs the engine at start.
 */
export const makeProverPool = (
  options: ProverPoolOptions = {}
): Effect.Effect<ProverPool, ProverStartupError, Scope.Scope | ArtifactFiles> =>
  Effect.gen(function*() {
    const files = yield* ArtifactFiles
    const filesOf = (circuit: Circuit): Effect.Effect<CircuitFiles, ProverFailure> =>
      Effect.gen(function*() {
        if (circuit.status !== "ready" || circuit.artifacts === null) {
          return yield* new ProverFailure({ code: "internal", message: `Circuit ${circuit.name} is not ready (${circuit.status})` })
        }
        const { wasm, zkey } = circuit.artifacts
        const [wasmPath, zkeyPath] = yield* Effect.all([files.path(wasm), files.path(zkey)], { concurrency: 2 })
        return {
          wasm: { digest: wasm, path: wasmPath },
          zkey: { digest: zkey, path: zkeyPath, size: statSync(zkeyPath).size },
          system: circuit.proving_system
        }
      })

    const cores = availableParallelism()
    const poolSize = Math.max(1, options.poolSize ?? cores)
    const timeout = Duration.decode(options.timeout ?? "60 seconds")
    const universalTimeout = Duration.decode(options.universalTimeout ?? "120 seconds")
    const startup = (name: string) => (error: ConfigError.ConfigError) => new ProverStartupError({ message: `${name}: ${error.message}` })
    const requested = options.engine ?? (yield* ProverEngineConfig.pipe(Effect.mapError(startup("MZK_PROVER_ENGINE"))))
    const native = loadNativeProver()
    const choice = yield* chooseEngine(requested, native).pipe(
      Either.mapLeft((message) => new ProverStartupError({ message }))
    )
    const threadsPerProof = Math.max(1, Math.floor(options.threadsPerProof ?? cores / poolSize))
    const priority = options.priority ?? (yield* ProverPriorityConfig.pipe(Effect.mapError(startup("MZK_PROVER_PRIORITY"))))
    const memoryBudgetBytes = options.memoryBudgetBytes ?? (yield* ProverMemoryConfig.pipe(Effect.mapError(startup("MZK_PROVER_MEMORY"))))
    const universalMemoryBytes = options.universalMemoryBytes ?? memoryBudgetBytes
    const preload = yield* Effect.forEach(options.preload ?? BUILTIN_CIRCUITS.map((c) => c.name), (name) =>
      builtinCircuit(name).pipe(
        Effect.mapError(() => new ProverStartupError({ message: `No built-in circuit ${JSON.stringify(name)} to preload` })),
        Effect.flatMap((circuit) => filesOf(circuit)),
        Effect.mapError((error) => new ProverStartupError({ message: error.message }))
      ))
    yield* Effect.logInfo(
      choice.engine === "native"
        ? `prover engine: native (${poolSize * threadsPerProof} threads: ${poolSize} proofs at once × ${threadsPerProof} each, ` +
          `${choice.kernel} kernel, ${priority} priority; ${choice.why})`
        : `prover engine: snarkjs (${poolSize} threads; ${choice.why})`
    )

    const workerData = {
      engine: choice.engine,
      threadsPerProof,
      priority,
      memoryBudgetBytes,
      // A key's precomputed tables never take more than a thread may hold in all, nor more than
      // tableBudgetBytes: by default little enough that a large key proves on its bases alone
      // (the peak RSS target against rapidsnark), while small keys keep most of their copies.
      tableBudgetMB: Math.min(1024, Math.floor(memoryBudgetBytes / 2 ** 20), Math.floor((options.tableBudgetBytes ?? DEFAULT_TABLE_BUDGET) / 2 ** 20)),
      // Native: what one key may hold in all (its tables, resident sections and the scratch of as
      // many proofs as there are threads to run them), and where its tables are cached on disk.
      memoryBudgetMB: Math.max(1, Math.floor(memoryBudgetBytes / 2 ** 20)),
      proofsInFlight: poolSize,
      tableCacheDir: files.tableCacheDir,
      // Native: the first thread to load a key builds its tables (the others wait and share them).
      loadThreads: cores,
      ...snarkjsThreadData("mzk-prover"),
      singleThreadedCurve: true,
      preload
    }
    const live = new Set<Worker>()
    const slots = new Set<Slot>()
    // Counters of threads that were replaced, so the totals never go backwards.
    let retired = NO_STATS
    const idle = yield* Queue.unbounded<Slot>()
    const scope = yield* Effect.scope

    yield* Effect.addFinalizer(() =>
      Effect.promise(() => Promise.all([...live].map((worker) => worker.terminate()))).pipe(
        Effect.zipRight(Queue.shutdown(idle))
      )
    )

    const started = (slot: Slot) => Effect.sync(() => slots.add(slot))
    const first = yield* Effect.all(Array.from({ length: poolSize }, () => spawn(workerData, live).pipe(Effect.tap(started))), {
      concurrency: "unbounded"
    })
    yield* Queue.offerAll(idle, first)

    const replace = (slot: Slot) =>
      Effect.gen(function*() {
        slot.cancel()
        live.delete(slot.worker)
        slots.delete(slot)
        retired = {
          ...retired,
          loads: retired.loads + slot.stats.loads,
          hits: retired.hits + slot.stats.hits,
          evictions: retired.evictions + slot.stats.evictions
        }
        slot.detach()
        yield* Effect.promise(() => slot.worker.terminate())
        yield* spawn(workerData, live).pipe(
          Effect.tapError((error) => Effect.logWarning(error.message)),
          Effect.retry(Schedule.spaced("1 second")),
          Effect.tap(started),
          Effect.flatMap((fresh) => Queue.offer(idle, fresh)),
          Effect.forkIn(scope)
        )
      })

    const withSlot = (message: Record<string, unknown>, limit: Duration.Duration = timeout) =>
      Effect.acquireUseRelease(
        Queue.take(idle),
        (slot) =>
          slot.run(message).pipe(
            Effect.timeoutFail({
              duration: limit,
              onTimeout: () => new ProverFailure({ code: "timeout", message: `Proof generation exceeded ${Duration.format(limit)}` })
            })
          ),
        (slot) => (slot.busy || slot.dead ? replace(slot) : Queue.offer(idle, slot))
      )

    const isUniversal = (system: ProvingSystem) => system === "plonk" || system === "fflonk"

    const proveOnce = (circuit: Circuit, inputs: Record<string, unknown>) =>
      Effect.gen(function*() {
        const circuitFiles = yield* filesOf(circuit)
        const universal = isUniversal(circuit.proving_system)
        const zkeyBytes = circuitFiles.zkey.size
        if (universal && zkeyBytes * UNIVERSAL_MEMORY_FACTOR > universalMemoryBytes) {
          return yield* new ProverFailure({
            code: "internal",
            message: `The ${circuit.proving_system} key of ${circuit.name} (${zkeyBytes} bytes) needs about ` +
              `${zkeyBytes * UNIVERSAL_MEMORY_FACTOR} bytes to prove, over this server's ceiling of ${universalMemoryBytes}`
          })
        }
        const reply = yield* withSlot({ op: "prove", circuit: circuitFiles, inputs }, universal ? universalTimeout : timeout)
        if (!reply.ok && reply.corrupt !== undefined) {
          yield* files.invalidate(reply.corrupt)
          return Option.none<Reply>()
        }
        return Option.some(reply)
      })

    const prove = (circuit: Circuit, inputs: CircuitInputs): Effect.Effect<ProverOutput, ProverFailure> =>
      Effect.gen(function*() {
        const checked = checkInputs(circuit, inputs)
        if (Either.isLeft(checked)) return yield* new ProverFailure({ code: "invalid_inputs", message: checked.left })
        // A cached file found corrupt by the thread is dropped and fetched again, once.
        let attempt = yield* proveOnce(circuit, checked.right)
        if (Option.isNone(attempt)) attempt = yield* proveOnce(circuit, checked.right)
        if (Option.isNone(attempt)) {
          return yield* new ProverFailure({ code: "internal", message: `The artifacts of ${circuit.name} are still corrupt after a fresh fetch` })
        }
        const reply = attempt.value
        if (!reply.ok) return yield* failure(reply)
        if (!("proof" in reply)) return yield* new ProverFailure({ code: "internal", message: "Unexpected prover reply" })
        return { proof: reply.proof, public_signals: reply.publicSignals, ...(reply.elapsedMs === undefined ? {} : { proving_ms: reply.elapsedMs }) }
      })

    const verify = (circuit: Circuit, proof: SnarkjsProof, publicSignals: ReadonlyArray<string>): Effect.Effect<boolean, ProverFailure> =>
      Effect.gen(function*() {
        if (circuit.verification_key === null || circuit.verification_key === undefined) {
          return yield* new ProverFailure({ code: "internal", message: `Circuit ${circuit.name} has no verification key` })
        }
        const reply = yield* withSlot({ op: "verify", vkey: circuit.verification_key, proof, publicSignals, system: circuit.proving_system })
        if (!reply.ok) return yield* failure(reply)
        if (!("valid" in reply)) return yield* new ProverFailure({ code: "internal", message: "Unexpected prover reply" })
        return reply.valid
      })

    const stats = Effect.sync((): ProverStats =>
      [...slots].reduce(
        (sum, slot) => ({
          loads: sum.loads + slot.stats.loads,
          hits: sum.hits + slot.stats.hits,
          evictions: sum.evictions + slot.stats.evictions,
          entries: sum.entries + slot.stats.entries,
          bytes: sum.bytes + slot.stats.bytes
        }),
        retired
      )
    )

    const ultraHonk = makeUltraHonkLane({
      poolSize,
      ...(options.noirCrs === undefined ? {} : { crs: options.noirCrs }),
      timeout: Duration.decode(options.ultraHonkTimeout ?? "120 seconds"),
      memoryBytes: options.ultraHonkMemoryBytes ?? memoryBudgetBytes,
      files
    })
    return {
      capacity: poolSize,
      prove: (circuit, inputs) => circuit.proving_system === "ultra_honk" ? ultraHonk.prove(circuit, inputs) : prove(circuit, inputs),
      verify: (circuit, proof, signals) =>
        circuit.proving_system === "ultra_honk" ? ultraHonk.verify(circuit, proof, signals) : verify(circuit, proof, signals),
      stats
    }
  })

/**
 * UltraHonk proofs of Noir programs (bb.js): beside the snarkjs/native threads, with as many at
 * once as the pool has threads, each under its own time limit and with Barretenberg's wasm memory
 * capped. bb.js runs its wasm on a worker thread of its own; noir_js computes the witness here.
 * A proof past its limit is abandoned (its result discarded), not killed: bb.js offers no way to
 * stop one, so the memory cap is what bounds what an abandoned proof holds meanwhile.
 */
const makeUltraHonkLane = (options: {
  readonly poolSize: number
  readonly crs?: string
  readonly timeout: Duration.Duration
  readonly memoryBytes: number
  readonly files: ArtifactFiles["Type"]
}) => {
  const permits = Effect.unsafeMakeSemaphore(options.poolSize)
  const engine = { maxMemoryPages: wasmPages(options.memoryBytes) }
  const crsOf = Effect.suspend(() =>
    options.crs === undefined
      ? Effect.fail(new ProverFailure({ code: "internal", message: "This prover has no UltraHonk CRS (--noir-crs) to prove Noir programs with" }))
      : Effect.succeed({ path: options.crs }))
  /** `f` under a permit and the time limit, with its own time (from the permit on): the proof's `proving_ms`. */
  const run = <A>(what: string, f: () => Promise<A>, invalid: "invalid_inputs" | "internal") =>
    permits.withPermits(1)(Effect.timed(Effect.either(Effect.tryPromise({ try: f, catch: (e) => e }))).pipe(
      Effect.flatMap(([took, result]) =>
        Either.match(result, {
          onLeft: (e) =>
            Effect.fail(
              new ProverFailure({
                code: e instanceof UltraHonkError ? invalid : "internal",
                message: e instanceof Error ? e.message : String(e),
                proving_ms: Duration.toMillis(took)
              })
            ),
          onRight: (value) => Effect.succeed({ value, ms: Duration.toMillis(took) })
        })),
      Effect.timeoutFail({
        duration: options.timeout,
        onTimeout: () => new ProverFailure({ code: "timeout", message: `${what} exceeded ${Duration.format(options.timeout)}` })
      })
    ))
  const prove = (circuit: Circuit, inputs: CircuitInputs): Effect.Effect<ProverOutput, ProverFailure> =>
    Effect.gen(function*() {
      const checked = checkInputs(circuit, inputs)
      if (Either.isLeft(checked)) return yield* new ProverFailure({ code: "invalid_inputs", message: checked.left })
      if (circuit.status !== "ready" || circuit.artifacts === null) {
        return yield* new ProverFailure({ code: "internal", message: `Circuit ${circuit.name} is not ready (${circuit.status})` })
      }
      const crs = yield* crsOf
      const path = yield* options.files.path(circuit.artifacts.wasm)
      const program = yield* Effect.try({
        try: () => JSON.parse(readFileSync(path, "utf8")) as NoirProgram,
        catch: (e) => new ProverFailure({ code: "internal", message: `The program of ${circuit.name} cannot be read: ${String(e)}` })
      })
      const { ms, value: made } = yield* run("Proof generation", () => proveUltraHonk(program, checked.right, crs, engine), "invalid_inputs")
      return { proof: ultraHonkProofRecord(made.proof), public_signals: publicSignalsDecimal(made.publicInputs), proving_ms: ms }
    })
  const verify = (circuit: Circuit, proof: SnarkjsProof, signals: ReadonlyArray<string>): Effect.Effect<boolean, ProverFailure> =>
    Effect.gen(function*() {
      const crs = yield* crsOf
      // A proof or signals not even shaped as UltraHonk's are not a valid proof; a bad key is ours.
      return yield* run("Verification", () => verifyUltraHonkRecord(circuit.verification_key, proof, signals, crs, engine), "internal").pipe(
        Effect.map(({ value }) => value),
        Effect.catchIf((failure) => /^(proof|public_inputs|public_signals)/.test(failure.message), () => Effect.succeed(false))
      )
    })
  return { prove, verify }
}

/**
 * The Groth16 prover as a scoped layer: threads start (warm, with the built-in circuits) when it
 * is built, stop when it closes. It finds artifacts through `ArtifactFiles` (`ArtifactFilesLive`).
 */
export const ProverPoolLive = (options: ProverPoolOptions = {}): Layer.Layer<Prover, ProverStartupError, ArtifactFiles> =>
  Layer.scoped(Prover, makeProverPool(options))
