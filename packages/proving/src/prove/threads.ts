import { type Circuit, type CircuitInputs, ProverFailure, type ProverOutput, type ProvingSystem, type SnarkjsProof } from "@mzk/core"
import { Duration, Effect, Either, Option, Queue, Schedule, type Scope } from "effect"
import { statSync } from "node:fs"
import { Worker } from "node:worker_threads"
import type { ArtifactFiles } from "../artifacts/files.js"
import { checkInputs, type ProverLane, ProverStartupError } from "./lane.js"
import type { CircuitFiles, ProverJob, ProverReady, ProverReply as Reply, ProverThreadData, ThreadStats } from "./messages.js"

// The lane of the systems snarkjs's formats carry (Groth16, natively where the addon loaded;
// PLONK and FFLONK): a warm pool of worker threads running proveThread.mjs.

/**
 * What the pool's threads hold and did, summed over its threads (`loads`, `hits` and `evictions`
 * include threads since replaced; `entries` and `bytes` are what the live threads hold now).
 */
export interface ProverStats extends ThreadStats {
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

/**
 * What snarkjs's PLONK/FFLONK prover holds per byte of zkey, estimated: the key itself, its
 * polynomials in evaluation form (4× and 8× extended domains) and the witness's. Measured on the
 * built-in circuits at 3 to 4× the zkey's size in peak heap; 4 leaves room.
 */
export const UNIVERSAL_MEMORY_FACTOR = 4

const WORKER_URL = new URL("./proveThread.mjs", import.meta.url)


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

  run(message: ProverJob): Effect.Effect<Reply> {
    return Effect.async<Reply>((resume) => {
      if (this.dead) return resume(Effect.succeed({ ok: false, code: "internal", message: "The prover thread stopped" }))
      this.busy = true
      this.current = (reply) => resume(Effect.succeed(reply))
      this.worker.ref()
      this.worker.postMessage({ ...message, id: this.nextId++ })
    })
  }
}

/** The thread's data but the cancel flag, which each thread gets its own of. */
export type ThreadLaneData = Omit<ProverThreadData, "cancelFlag">

const spawn = (workerData: ThreadLaneData, live: Set<Worker>): Effect.Effect<Slot, ProverStartupError> =>
  Effect.async<Slot, ProverStartupError>((resume) => {
    const cancelFlag = new Int32Array(new SharedArrayBuffer(4))
    const data: ProverThreadData = { ...workerData, cancelFlag }
    const worker = new Worker(WORKER_URL, { workerData: data })
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
    const onMessage = (message: ProverReady | Reply) => {
      if (!("ready" in message)) return
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

/** A circuit's files as a thread loads them, found by digest through `ArtifactFiles`. */
export const circuitFilesOf = (files: ArtifactFiles["Type"], circuit: Circuit): Effect.Effect<CircuitFiles, ProverFailure> =>
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

/** What the thread lane is started with: its threads' data (engine, budgets, preloads) and limits. */
export interface ThreadLaneOptions {
  readonly poolSize: number
  readonly workerData: ThreadLaneData
  /** Groth16's per-proof limit, after which the thread is killed and replaced. */
  readonly timeout: Duration.Duration
  /** PLONK's and FFLONK's. */
  readonly universalTimeout: Duration.Duration
  /** PLONK's and FFLONK's memory ceiling (see `UNIVERSAL_MEMORY_FACTOR`). */
  readonly universalMemoryBytes: number
  readonly files: ArtifactFiles["Type"]
}

/** The thread lane, with what its threads hold. Closing the scope terminates every thread. */
export const makeThreadLane = (
  options: ThreadLaneOptions
): Effect.Effect<ProverLane & { readonly stats: Effect.Effect<ProverStats> }, ProverStartupError, Scope.Scope> =>
  Effect.gen(function*() {
    const { poolSize, workerData, timeout, universalTimeout, universalMemoryBytes, files } = options
    const filesOf = (circuit: Circuit) => circuitFilesOf(files, circuit)
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

    const withSlot = (message: ProverJob, limit: Duration.Duration = timeout) =>
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

    return { prove, verify, stats }
  })
