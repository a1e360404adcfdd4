import { type CircuitInputs, type Groth16Proof, Prover, ProverFailure, type ProverOutput } from "@mzk/core"
import { Duration, Effect, Either, Layer, Option, Queue, Schedule, Schema, type Scope } from "effect"
import { availableParallelism } from "node:os"
import { Worker } from "node:worker_threads"
import { artifactsOf, BUILD_DIR, CIRCUIT_SPECS, specOfCircuit, validateInputs } from "./catalog.js"

export interface SnarkjsProverOptions {
  /** Prover threads; each proves one proof at a time on one core. Default: the core count. */
  readonly poolSize?: number
  /** Per-proof limit, after which the thread is killed and replaced. Default 60 s. */
  readonly timeout?: Duration.DurationInput
  /** Circuits to load (default: every circuit of the catalog). */
  readonly circuits?: ReadonlyArray<string>
  /** Where the built artifacts are (default: this package's `build/`). */
  readonly buildDir?: string
}

/** The pool could not start: artifacts missing or a thread failed to load them. */
export class ProverStartupError extends Schema.TaggedError<ProverStartupError>()("ProverStartupError", {
  message: Schema.String
}) {}

type Reply =
  | { readonly ok: true; readonly proof: Groth16Proof; readonly publicSignals: ReadonlyArray<string> }
  | { readonly ok: true; readonly valid: boolean }
  | { readonly ok: false; readonly code: ProverFailure["code"]; readonly message: string }

const WORKER_URL = new URL("./proverWorker.mjs", import.meta.url)

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

  constructor(readonly worker: Worker) {
    worker.on("message", this.onMessage)
    worker.on("error", this.onError)
    worker.on("exit", this.onExit)
    // Idle threads must not keep the process alive; a running job does (see `run`).
    worker.unref()
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

const spawn = (workerData: unknown, live: Set<Worker>): Effect.Effect<Slot, ProverStartupError> =>
  Effect.async<Slot, ProverStartupError>((resume) => {
    const worker = new Worker(WORKER_URL, { workerData })
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
      resume(Effect.succeed(new Slot(worker)))
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
 * The snarkjs `Prover`: a warm pool of worker threads with the curve, witness calculators, zkeys
 * and verification keys loaded. A job that outlives the timeout (or is interrupted) has its thread
 * killed and replaced, since snarkjs cannot be stopped mid-proof. Closing the scope terminates
 * every thread, so nothing keeps the process alive.
 */
export const makeSnarkjsProver = (
  options: SnarkjsProverOptions = {}
): Effect.Effect<Prover["Type"], ProverStartupError, Scope.Scope> =>
  Effect.gen(function*() {
    const poolSize = Math.max(1, options.poolSize ?? availableParallelism())
    const timeout = Duration.decode(options.timeout ?? "60 seconds")
    const names = options.circuits ?? CIRCUIT_SPECS.map((spec) => spec.circuit)
    const workerData = {
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

/** The snarkjs prover as a scoped layer: threads start (warm) when it is built, stop when it closes. */
export const SnarkjsProverLive = (options: SnarkjsProverOptions = {}): Layer.Layer<Prover, ProverStartupError> =>
  Layer.scoped(Prover, makeSnarkjsProver(options))

