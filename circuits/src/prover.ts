import { type CircuitInputs, type Groth16Proof, Prover, ProverFailure, type ProverOutput } from "@mzk/core"
import { loadNativeProver, type NativeLoad } from "@mzk/prover-native"
import { Config, Duration, Effect, Either, Layer, Option, Queue, Schedule, Schema, type Scope } from "effect"
import { availableParallelism } from "node:os"
import { Worker } from "node:worker_threads"
import { artifactsOf, BUILD_DIR, CIRCUIT_SPECS, specOfCircuit, validateInputs } from "./catalog.js"

/**
 * Which Groth16 prover runs in the pool: `native` (@mzk/prover-native, C++), `snarkjs`
 * (WebAssembly), or `auto`: native when its addon loaded, snarkjs otherwise. Witnesses are always
 * computed by the circuits' own (circom) WebAssembly.
 */
export type ProverEngine = "auto" | "native" | "snarkjs"

export interface Groth16ProverOptions {
  /** Prover threads; each proves one proof at a time. Default: the core count. */
  readonly poolSize?: number
  /** Per-proof limit, after which the thread is killed and replaced. Default 60 s. */
  readonly timeout?: Duration.DurationInput
  /** Circuits to load (default: every circuit of the catalog). */
  readonly circuits?: ReadonlyArray<string>
  /** Where the built artifacts are (default: this package's `build/`). */
  readonly buildDir?: string
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

/** See `Groth16ProverOptions.priority`. */
export type ProverPriority = "normal" | "low" | "idle"

/** The pool could not start: artifacts missing or a thread failed to load them. */
export class ProverStartupError extends Schema.TaggedError<ProverStartupError>()("ProverStartupError", {
  message: Schema.String
}) {}

type Reply =
  | { readonly ok: true; readonly proof: Groth16Proof; readonly publicSignals: ReadonlyArray<string> }
  | { readonly ok: true; readonly valid: boolean }
  | { readonly ok: false; readonly code: ProverFailure["code"]; readonly message: string }

const WORKER_URL = new URL("./proverWorker.mjs", import.meta.url)

/** The engine chosen for a pool, and the sentence that says why (logged at start). */
export interface EngineChoice {
  readonly engine: "native" | "snarkjs"
  readonly kernel?: string
  readonly why: string
}

/**
 * Resolves the requested engine against what loaded: `native` without the addon is an error,
 * `auto` falls back to snarkjs with the reason.
 */
export const chooseEngine = (requested: ProverEngine, native: NativeLoad): Either.Either<EngineChoice, string> => {
  if (requested === "snarkjs") return Either.right({ engine: "snarkjs", why: "requested" })
  if (native.ok) return Either.right({ engine: "native", kernel: native.addon.kernel, why: requested === "native" ? "requested" : "addon loaded" })
  if (requested === "native") return Either.left(`The native prover was requested but is unavailable: ${native.reason}`)
  return Either.right({ engine: "snarkjs", why: `native prover unavailable: ${native.reason}` })
}

/** MZK_PROVER_PRIORITY: the prover threads' CPU priority. */
export const ProverPriorityConfig: Config.Config<ProverPriority> = Config.literal("normal", "low", "idle")("MZK_PROVER_PRIORITY").pipe(
  Config.withDefault<ProverPriority>("low")
)

/** MZK_PROVER_ENGINE, read through Effect's Config (the environment by default). */
export const ProverEngineConfig: Config.Config<ProverEngine> = Config.literal("auto", "native", "snarkjs")("MZK_PROVER_ENGINE").pipe(
  Config.withDefault<ProverEngine>("auto")
)

/** One prover thread. It runs one job at a time; the pool hands it out exclusively. */
class Slot {
  private current: ((reply: Reply) => void) | undefined
  private nextId = 0
  /** A job was started and has not answered: the thread may still be burning CPU on it. */
  busy = false
  dead = false

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
    const onMessage = (message: { ready?: boolean }) => {
      if (message.ready !== true) return
      detach()
      resume(Effect.succeed(new Slot(worker, cancelFlag)))
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

const failure = (reply: Reply & { ok: false }) => new ProverFailure({ code: reply.code, message: reply.message })

/**
 * The Groth16 `Prover`: a warm pool of worker threads, each with the witness calculators, the
 * proving keys (native: parsed once per process and shared; snarkjs: the zkey bytes) and the
 * verification keys loaded. A job that outlives the timeout (or is interrupted) has its thread
 * cancelled (native), killed and replaced. Closing the scope terminates every thread, so nothing
 * keeps the process alive. Logs the engine it runs at start.
 */
export const makeGroth16Prover = (
  options: Groth16ProverOptions = {}
): Effect.Effect<Prover["Type"], ProverStartupError, Scope.Scope> =>
  Effect.gen(function*() {
    const cores = availableParallelism()
    const poolSize = Math.max(1, options.poolSize ?? cores)
    const timeout = Duration.decode(options.timeout ?? "60 seconds")
    const names = options.circuits ?? CIRCUIT_SPECS.map((spec) => spec.circuit)
    const requested = options.engine ?? (yield* ProverEngineConfig.pipe(
      Effect.mapError((error) => new ProverStartupError({ message: `MZK_PROVER_ENGINE: ${error.message}` }))
    ))
    const native = loadNativeProver()
    const choice = yield* chooseEngine(requested, native).pipe(
      Either.mapLeft((message) => new ProverStartupError({ message }))
    )
    const threadsPerProof = Math.max(1, Math.floor(options.threadsPerProof ?? cores / poolSize))
    const priority = options.priority ?? (yield* ProverPriorityConfig.pipe(
      Effect.mapError((error) => new ProverStartupError({ message: `MZK_PROVER_PRIORITY: ${error.message}` }))
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
      // Native: the first thread to load a key builds its tables (the others wait and share them).
      loadThreads: cores,
      // ffjavascript imports the `web-worker` package, which assumes that every non-main thread is
      // one it started and, on import, loads `workerData.mod` as the thread's script. Give it an
      // empty module so it does nothing.
      mod: "data:text/javascript,",
      type: "module",
      name: "mzk-prover",
      singleThreadedCurve: true,
      circuits: names.map((name) => ({ name, ...artifactsOf(name, options.buildDir ?? BUILD_DIR) }))
    }
    const loaded = new Set(names)
    const live = new Set<Worker>()
    const idle = yield* Queue.unbounded<Slot>()
    const scope = yield* Effect.scope

    yield* Effect.addFinalizer(() =>
      Effect.promise(() => Promise.all([...live].map((worker) => worker.terminate()))).pipe(
        Effect.zipRight(Queue.shutdown(idle))
      )
    )

    const slots = yield* Effect.all(Array.from({ length: poolSize }, () => spawn(workerData, live)), { concurrency: "unbounded" })
    yield* Queue.offerAll(idle, slots)

    const replace = (slot: Slot) =>
      Effect.gen(function*() {
        slot.cancel()
        live.delete(slot.worker)
        slot.detach()
        yield* Effect.promise(() => slot.worker.terminate())
        yield* spawn(workerData, live).pipe(
          Effect.tapError((error) => Effect.logWarning(error.message)),
          Effect.retry(Schedule.spaced("1 second")),
          Effect.flatMap((fresh) => Queue.offer(idle, fresh)),
          Effect.forkIn(scope)
        )
      })

    const withSlot = (message: Record<string, unknown>) =>
      Effect.acquireUseRelease(
        Queue.take(idle),
        (slot) =>
          slot.run(message).pipe(
            Effect.timeoutFail({
              duration: timeout,
              onTimeout: () => new ProverFailure({ code: "timeout", message: `Proof generation exceeded ${Duration.format(timeout)}` })
            })
          ),
        (slot) => (slot.busy || slot.dead ? replace(slot) : Queue.offer(idle, slot))
      )

    const unknown = (circuit: string) =>
      new ProverFailure({ code: "invalid_inputs", message: `Unknown circuit ${JSON.stringify(circuit)}` })

    const prove = (circuit: string, inputs: CircuitInputs): Effect.Effect<ProverOutput, ProverFailure> =>
      Effect.gen(function*() {
        const spec = specOfCircuit(circuit)
        if (Option.isNone(spec) || !loaded.has(circuit)) return yield* unknown(circuit)
        // Defence in depth: the witness calculator would silently reduce non-canonical values.
        const checked = validateInputs({ type: spec.value.type, inputs })
        if (Either.isLeft(checked)) {
          return yield* new ProverFailure({
            code: "invalid_inputs",
            message: checked.left.map((d) => `${d.path}: ${d.message}`).join("; ")
          })
        }
        const reply = yield* withSlot({ op: "prove", circuit, inputs: checked.right.inputs })
        if (!reply.ok) return yield* failure(reply)
        if (!("proof" in reply)) return yield* new ProverFailure({ code: "internal", message: "Unexpected prover reply" })
        return { proof: reply.proof, public_signals: reply.publicSignals }
      })

    const verify = (circuit: string, proof: Groth16Proof, publicSignals: ReadonlyArray<string>): Effect.Effect<boolean, ProverFailure> =>
      Effect.gen(function*() {
        if (!loaded.has(circuit)) return yield* unknown(circuit)
        const reply = yield* withSlot({ op: "verify", circuit, proof, publicSignals })
        if (!reply.ok) return yield* failure(reply)
        if (!("valid" in reply)) return yield* new ProverFailure({ code: "internal", message: "Unexpected prover reply" })
        return reply.valid
      })

    return { capacity: poolSize, prove, verify }
  })

/** The Groth16 prover as a scoped layer: threads start (warm) when it is built, stop when it closes. */
export const Groth16ProverLive = (options: Groth16ProverOptions = {}): Layer.Layer<Prover, ProverStartupError> =>
  Layer.scoped(Prover, makeGroth16Prover(options))
