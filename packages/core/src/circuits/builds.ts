import { Clock, Context, Effect, Either, Layer, Option, Schema, type Scope } from "effect"
import type { CircuitId } from "../kernel/ids.js"
import { Events } from "../events/service.js"
import { timestampFromMillis } from "../kernel/time.js"
import { runLeasedJobs } from "../kernel/leasedJobs.js"
import { Transactor } from "../kernel/transaction.js"
import type { CircuitError, StoredCircuit } from "./circuit.js"
import { BuildFailure, type BuildFile, type BuildOutput, CircuitCompiler } from "./compiler.js"
import { CircuitsConfig } from "./config.js"
import { ArtifactsRepo, CircuitsRepo } from "./repo.js"
import { loadSource } from "./upload.js"
import { CircuitBuildWakeup } from "./wakeup.js"

/** The build's claim was lost (taken over, or the circuit removed) before it settled: its writes are undone. */
class ClaimLost extends Schema.TaggedError<ClaimLost>()("ClaimLost", {}) {}

const circuitError = (failure: BuildFailure): CircuitError => ({
  code: failure.code,
  message: failure.message,
  ...(failure.file === undefined ? {} : { file: failure.file }),
  ...(failure.line === undefined ? {} : { line: failure.line })
})

/**
 * The build loop: a scoped background loop that claims compiling circuits from storage, builds
 * them with the `CircuitCompiler` and settles each as `ready` or `failed` with its event in one
 * transaction. Like the proof worker it claims no more than it runs (`buildConcurrency`), so a
 * claim's lease (the build time limit plus a margin) measures building, not waiting; a worker that
 * dies mid-build has its builds taken over when their leases lapse, and a build claimed more than
 * `maxAttempts` times (one that keeps killing its workers) fails as `internal`. It wakes on
 * in-process uploads or else every `pollIntervalMs`.
 */
export class CircuitBuilds extends Context.Tag("@mzk/core/CircuitBuilds")<CircuitBuilds, {
  /** Builds this process is working on now. */
  readonly inFlight: Effect.Effect<number>
}>() {
  /** The build loop for every circuit in storage. */
  static readonly layer: Layer.Layer<CircuitBuilds, never, CircuitBuildsNeeds> = Layer.scoped(this, Effect.suspend(() => makeCircuitBuilds()))

  /**
   * A build loop for these circuits only: what a command that adds a circuit runs, so that it
   * builds its own upload with its own settings and never takes anyone else's.
   */
  static readonly only = (ids: ReadonlyArray<CircuitId>): Layer.Layer<CircuitBuilds, never, CircuitBuildsNeeds> =>
    Layer.scoped(this, Effect.suspend(() => makeCircuitBuilds(ids)))
}

const makeCircuitBuilds = (only?: ReadonlyArray<CircuitId>) =>
    Effect.gen(function*() {
      const tx = yield* Transactor
      const repo = yield* CircuitsRepo
      const artifacts = yield* ArtifactsRepo
      const compiler = yield* CircuitCompiler
      const events = yield* Events
      const wakeup = yield* CircuitBuildWakeup
      const config = yield* CircuitsConfig

      /**
       * Stores what the build made and marks the circuit ready, with its event, in one transaction;
       * when the claim was lost the artifacts are rolled back too, so nothing is left unreferenced.
       */
      const settleReady = (circuit: StoredCircuit, out: BuildOutput) =>
        tx.transaction(Effect.gen(function*() {
          // A stored input given back (a prebuilt upload's checked files) is already there under its digest.
          const keep = (file: BuildFile) => (file instanceof Uint8Array ? artifacts.put(file) : Effect.succeed(file.digest))
          const built = {
            wasm: yield* keep(out.wasm),
            zkey: yield* keep(out.zkey),
            r1cs: out.r1cs === null ? null : yield* keep(out.r1cs),
            sym: out.sym === null ? null : yield* artifacts.put(out.sym)
          }
          const settled = yield* repo.complete(circuit.id, circuit.attempts, {
            artifacts: built,
            constraints: out.constraints,
            inputs: out.inputs,
            public_signals: out.public_signals,
            verification_key: out.verification_key,
            proving_system: out.proving_system,
            development_only: out.development_only,
            updated_at: timestampFromMillis(yield* Clock.currentTimeMillis)
          })
          if (Option.isNone(settled)) return yield* new ClaimLost()
          yield* events.record(circuit.owner, "circuit.ready", {
            name: circuit.name,
            version: circuit.version,
            status: "ready",
            proving_system: out.proving_system,
            constraints: out.constraints,
            development_only: out.development_only,
            created_at: circuit.created_at,
            metadata: circuit.metadata
          })
        })).pipe(Effect.catchTag("ClaimLost", () => Effect.void))

      const settleFailed = (circuit: StoredCircuit, error: CircuitError) =>
        tx.transaction(Effect.gen(function*() {
          const at = timestampFromMillis(yield* Clock.currentTimeMillis)
          const settled = yield* repo.fail(circuit.id, circuit.attempts, error, at)
          if (Option.isNone(settled)) return
          yield* events.record(circuit.owner, "circuit.failed", {
            name: circuit.name,
            version: circuit.version,
            status: "failed",
            error,
            created_at: circuit.created_at,
            metadata: circuit.metadata
          })
        }))

      const build = (circuit: StoredCircuit) =>
        loadSource(
          artifacts,
          circuit.source,
          (digest) => new BuildFailure({ code: "internal", message: `The upload's file ${digest} is missing from storage` })
        ).pipe(
          Effect.flatMap(compiler.build),
          // The compiler enforces the limit in its child process; this bounds a compiler that does not return.
          Effect.timeoutFail({
            duration: config.buildTimeoutMs,
            onTimeout: () =>
              new BuildFailure({ code: "compile_timeout", message: `Compilation exceeded the time limit of ${config.buildTimeoutMs / 1000} s` })
          }),
          Effect.catchAllDefect((defect) =>
            Effect.zipRight(
              Effect.logError("circuit compiler defect", defect),
              Effect.fail(new BuildFailure({ code: "internal", message: "The compiler failed unexpectedly" }))
            )
          ),
          Effect.map(Either.right),
          Effect.catchTag("BuildFailure", (failure) => Effect.succeed(Either.left(failure)))
        )

      const run = (circuit: StoredCircuit) =>
        Effect.gen(function*() {
          if (circuit.attempts > config.maxAttempts) {
            return yield* settleFailed(circuit, {
              code: "internal",
              message: `The build was interrupted ${circuit.attempts - 1} times; giving up`
            })
          }
          const result = yield* build(circuit)
          yield* Either.match(result, {
            onLeft: (failure) => settleFailed(circuit, circuitError(failure)),
            onRight: (out) => settleReady(circuit, out)
          })
        })

      return yield* runLeasedJobs({
        name: "circuit builds",
        capacity: config.buildConcurrency,
        leaseMs: config.buildTimeoutMs + config.leaseMarginMs,
        pollIntervalMs: config.pollIntervalMs,
        wakeup,
        claim: (request) => repo.claimBuilds({ ...request, only }),
        run,
        release: (circuit) => repo.release(circuit.id, circuit.attempts),
        describe: (circuit) => `circuit ${circuit.id}`
      })
    })

type CircuitBuildsNeeds = Exclude<Effect.Effect.Context<ReturnType<typeof makeCircuitBuilds>>, Scope.Scope>
