import { HttpServer } from "@effect/platform"
import { PostgresWakeups } from "@mzk/adapters-postgres"
import { NodeHttpServer } from "@effect/platform-node"
import {
  ArtifactFilesLive,
  BuiltinCircuitsLive,
  CircuitCompilerLive,
  noirCrsOf,
  ProverPoolLive,
  setupStartup,
  VerifierLive
} from "@mzk/proving"
import {
  CircuitsConfig,
  type CircuitsConfigShape,
  CoreLoops,
  CoreServices,
  DEFAULT_CIRCUITS_CONFIG,
  Prover
} from "@mzk/core"
import { createMzkNodeServer, makeNodeListener, makeOperationsDispatcher, toNodeListener, TrustedProxies } from "@mzk/http"
import { Context, Effect, Layer } from "effect"
import { availableParallelism } from "node:os"
import { FoundationLive, over, proofsConfigOf } from "./foundation.js"
import { OperationsLive } from "./operations.js"
import type { CircuitsOptions, MzkOptions } from "./options.js"
import { NodeHostResolver, NodeWebhookTransport } from "./webhookTransport.js"

// Still exported from here: the package's index and the modules that take the options read them
// from mzk.js. Only foundation.ts needs them without the rest of the composition root.
export type { CircuitsOptions, MzkOptions } from "./options.js"

/**
 * Builds `layer` the first time a proof is made or verified, or when a proof worker is about to
 * claim its first proof (`Prover.ready`), in this layer's scope: commands that never prove
 * (`accounts create`, `migrate`, an API-only server) start no prover threads, and a process that
 * runs the proof worker starts them before it takes a proof, so no proof's times count their start.
 */
export const lazyProver = <R>(layer: Layer.Layer<Prover, unknown, R>, capacity: number): Layer.Layer<Prover, never, R> =>
  Layer.scoped(Prover, Effect.gen(function*() {
    const scope = yield* Effect.scope
    const context = yield* Effect.context<R>()
    const get = yield* Effect.cached(
      Layer.buildWithScope(layer, scope).pipe(Effect.map(Context.get(Prover)), Effect.provide(context), Effect.orDie)
    )
    return {
      capacity,
      // The proof worker starts it before its first claim: no proof's times count the start.
      ready: Effect.asVoid(Effect.exit(get)),
      prove: (circuit, inputs) => Effect.flatMap(get, (prover) => prover.prove(circuit, inputs)),
      verify: (circuit, proof, signals) => Effect.flatMap(get, (prover) => prover.verify(circuit, proof, signals))
    }
  }))

/**
 * The composition root: the core services over the chosen storage, the OS's randomness, the
 * circuits, the prover, DNS for webhook URL checks and the session authenticator. Every way of
 * running mzk (server, worker, CLI, embedding) starts here.
 */
export const CoreServicesLive = (options: MzkOptions) => {
  const circuits = options.circuits ?? {}
  const proofs = proofsConfigOf(options)
  const noir = noirCrsOf(circuits)
  const prover = options.prover ?? ProverPoolLive({
    timeout: proofs.timeoutMs,
    ...(noir === undefined ? {} : { noirCrs: noir.path }),
    ...(options.proverThreads === undefined ? {} : { poolSize: options.proverThreads }),
    ...(options.proverEngine === undefined ? {} : { engine: options.proverEngine }),
    ...(circuits.proverMemoryBytes === undefined ? {} : { memoryBudgetBytes: circuits.proverMemoryBytes })
  }).pipe(Layer.provide(ArtifactFilesLive(circuits.cacheDir === undefined ? {} : { cacheDir: circuits.cacheDir })))
  const config = circuitsConfig(circuits)
  const core = CoreServices.pipe(
    Layer.provideMerge(
      options.startProver === "eager"
        ? Layer.orDie(prover)
        : lazyProver(prover, options.proverThreads ?? availableParallelism())
    ),
    Layer.provideMerge(options.verifier ?? VerifierLive({ engine: options.proverEngine, noirCrs: noir?.path })),
    Layer.provideMerge(BuiltinCircuitsLive),
    Layer.provideMerge(CircuitCompilerLive({
      ...(circuits.ptau === undefined ? {} : { ptau: circuits.ptau }),
      ...(circuits.developmentPtau === undefined ? {} : { developmentPtau: circuits.developmentPtau }),
      ...(noir === undefined ? {} : { noirCrs: noir.path, noirCrsDevelopment: noir.development }),
      timeoutMs: config.buildTimeoutMs,
      memoryBytes: config.buildMemoryBytes
    })),
    Layer.provideMerge(Layer.succeed(CircuitsConfig, config)),
    // Between the services and storage: they report to its Telemetry, and it reads the queue from storage.
    Layer.provideMerge(OperationsLive({ ...options.operations, prover: options.startProver ?? "lazy" })),
    Layer.provideMerge(NodeHostResolver()),
    Layer.provideMerge(Layer.succeed(TrustedProxies, options.trustProxy ?? [])),
    Layer.provideMerge(FoundationLive(options))
  )
  // Many processes share a Postgres database: work one of them writes wakes the others' loops.
  return options.database.kind === "postgres"
    ? PostgresWakeups({ connectionString: options.database.url }).pipe(Layer.provideMerge(core))
    : core
}

/** The circuits settings over their defaults: only the limits and timings, not the build's files. */
const circuitsConfig = ({ cacheDir: _c, developmentPtau: _d, noirCrs: _n, proverMemoryBytes: _m, ptau: _p, ...limits }: CircuitsOptions): CircuitsConfigShape =>
  over(DEFAULT_CIRCUITS_CONFIG, limits)

/** What a process that builds circuits checks and prepares at start (`setupStartup`), under a build's limits. */
const circuitsStartup = (circuits: CircuitsOptions = {}) => {
  const config = circuitsConfig(circuits)
  return setupStartup(circuits, { timeoutMs: config.buildTimeoutMs, memoryBytes: config.buildMemoryBytes })
}

/**
 * The background loops (`CoreLoops`) over Node's webhook transport, and the checks a process that
 * runs them makes at start (its ptau and UltraHonk CRS).
 */
export const CoreLoopsLive = (options: Pick<MzkOptions, "allowInsecureWebhooks" | "circuits">) =>
  Layer.merge(
    CoreLoops.pipe(Layer.provide(NodeWebhookTransport({ allowInsecure: options.allowInsecureWebhooks ?? false }))),
    circuitsStartup(options.circuits)
  )

/**
 * The core and, unless `workers` is false, the background loops with what they check at start:
 * what every process of mzk runs beside its way in (HTTP server, worker, embedding). With the loops
 * the prover pool starts with the process (`eager`), so no proof pays for it.
 */
export const ServicesLive = (options: MzkOptions & { readonly workers?: boolean | undefined }) =>
  (options.workers === false ? Layer.empty : CoreLoopsLive(options)).pipe(
    Layer.provideMerge(CoreServicesLive({ ...options, startProver: options.startProver ?? (options.workers === false ? "lazy" : "eager") }))
  )

export interface ServeOptions extends MzkOptions {
  readonly port: number
  readonly host: string
  /** Run the background loops in the server process too (default true). */
  readonly workers?: boolean
}

/** The HTTP server on a Node `http.Server`, listening until its scope closes. */
export const HttpServerLive = (options: ServeOptions) =>
  Layer.unwrapEffect(Effect.map(makeNodeListener, (listener) =>
    // The platform's Node server for listening, its address and a graceful close; mzk's own
    // listener for the requests (see @mzk/http's dispatcher).
    HttpServer.withLogAddress(NodeHttpServer.layer(() => createMzkNodeServer(listener), { port: options.port, host: options.host })))).pipe(
    // Kept in the output, so code running beside the server (tests, CLI tasks) shares its services.
    Layer.provideMerge(ServicesLive({ ...options, operations: { ...options.operations, metrics: options.operations?.metrics ?? true } }))
  )

export interface WorkerOptions extends MzkOptions {
  /** Serve `/healthz`, `/readyz` and `/metrics` (only those) on this port; none when absent. */
  readonly port?: number | undefined
  readonly host?: string | undefined
}

/**
 * A process that only works: the loops over the shared database, and with `port` the operational
 * endpoints, since its proofs and deliveries are counted in its own metrics.
 */
export const WorkerProcessLive = (options: WorkerOptions) => {
  const { port } = options
  const services = ServicesLive({
    ...options,
    workers: true,
    operations: { ...options.operations, metrics: port === undefined ? false : options.operations?.metrics ?? true }
  })
  if (port === undefined) return services
  return Layer.unwrapEffect(Effect.map(Effect.zip(makeOperationsDispatcher, Effect.runtime<never>()), ([dispatch, runtime]) =>
    HttpServer.withLogAddress(NodeHttpServer.layer(() => createMzkNodeServer(toNodeListener(runtime, dispatch)), { port, host: options.host ?? "127.0.0.1" })))).pipe(
    Layer.provideMerge(services)
  )
}
