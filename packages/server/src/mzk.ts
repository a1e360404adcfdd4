import { HttpServer } from "@effect/platform"
import { PostgresWakeups } from "@mzk/adapters-postgres"
import { NodeHttpServer } from "@effect/platform-node"
import {
  ArtifactFilesLive,
  BuiltinCircuitsLive,
  CircuitCompilerLive,
  crsPoints,
  ProverPoolLive,
  inspectPtau,
  developmentSetupIsNative,
  prepareDevelopmentPtau,
  VerifierLive,
  writeDevelopmentCrs
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
import { Context, Effect, Layer, Schema } from "effect"
import { availableParallelism } from "node:os"
import { join } from "node:path"
import { MzkFoundation, over, proofsConfigOf } from "./foundation.js"
import { MzkOperations } from "./operations.js"
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
export const MzkCore = (options: MzkOptions) => {
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
    Layer.provideMerge(MzkOperations({ ...options.operations, prover: options.startProver ?? "lazy" })),
    Layer.provideMerge(NodeHostResolver()),
    Layer.provideMerge(Layer.succeed(TrustedProxies, options.trustProxy ?? [])),
    Layer.provideMerge(MzkFoundation(options))
  )
  // Many processes share a Postgres database: work one of them writes wakes the others' loops.
  return options.database.kind === "postgres"
    ? PostgresWakeups({ connectionString: options.database.url }).pipe(Layer.provideMerge(core))
    : core
}

/**
 * The UltraHonk CRS of these options: the operator's, or with a development ptau the development
 * one kept beside it (made at start by `circuitsStartup`), or none.
 */
export const noirCrsOf = (circuits: CircuitsOptions): { readonly path: string; readonly development: boolean; readonly points: number } | undefined =>
  circuits.noirCrs !== undefined
    ? { path: circuits.noirCrs, development: false, points: 0 }
    : circuits.developmentPtau !== undefined
    ? { path: join(circuits.developmentPtau.dir, "noir-crs"), development: true, points: 2 ** circuits.developmentPtau.power + 1 }
    : undefined

/** The circuits settings over their defaults: only the limits and timings, not the build's files. */
const circuitsConfig = ({ cacheDir: _c, developmentPtau: _d, noirCrs: _n, proverMemoryBytes: _m, ptau: _p, ...limits }: CircuitsOptions): CircuitsConfigShape =>
  over(DEFAULT_CIRCUITS_CONFIG, limits)

/** The operator's ptau did not pass its check at start: not bn128, not prepared for phase 2, unreadable. */
export class PtauError extends Schema.TaggedError<PtauError>()("PtauError", { message: Schema.String }) {}

/**
 * What a process that builds circuits checks and prepares at start: the operator's ptau is read
 * (a wrong file fails the start, not the first upload), and a development ptau is made in the
 * background so the first upload does not wait for it.
 */
const circuitsStartup = (circuits: CircuitsOptions = {}) =>
  Layer.scopedDiscard(Effect.gen(function*() {
    const config = circuitsConfig(circuits)
    if (circuits.ptau !== undefined) {
      const path = circuits.ptau
      const header = yield* inspectPtau(path).pipe(Effect.mapError((failure) => new PtauError({ message: failure.message })))
      if (!header.bn128 || !header.prepared) {
        return yield* new PtauError({
          message: `--ptau ${path}: ${!header.bn128 ? "not a bn128 powers of tau" : "not prepared for phase 2 (run snarkjs powersoftau prepare phase2, or use a Hermez final file)"}`
        })
      }
      yield* Effect.logInfo(`circuits: powers of tau ${path} (power ${header.power}: circuits up to ${2 ** header.power} constraints)`)
    } else if (circuits.developmentPtau !== undefined && developmentSetupIsNative()) {
      yield* Effect.logWarning("circuits: DEVELOPMENT setup, natively from fresh toxic waste (any size, no powers of tau); circuits built with it are development_only")
    } else if (circuits.developmentPtau !== undefined) {
      const developmentPtau = circuits.developmentPtau
      yield* prepareDevelopmentPtau({ developmentPtau, timeoutMs: config.buildTimeoutMs, memoryBytes: config.buildMemoryBytes }).pipe(
        Effect.tap((path) => Effect.logWarning(`circuits: DEVELOPMENT powers of tau ${path} (power ${developmentPtau.power}); circuits built with it are development_only`)),
        Effect.catchAll((failure) => Effect.logError(`circuits: the development powers of tau could not be made: ${failure.message}`)),
        Effect.forkScoped
      )
    } else {
      yield* Effect.logInfo("circuits: no powers of tau (--ptau or --dev-ptau); uploads of circom sources are refused (setup_unavailable), prebuilt uploads work")
    }
    yield* noirStartup(circuits)
  }))

/**
 * The UltraHonk CRS checked at start (a missing or malformed one fails the start, not the first
 * Noir proof), or the development one made in the background when it is not there yet.
 */
const noirStartup = (circuits: CircuitsOptions) =>
  Effect.gen(function*() {
    const noir = noirCrsOf(circuits)
    if (noir === undefined) {
      return yield* Effect.logInfo("circuits: no UltraHonk CRS (--noir-crs or --dev-ptau); uploads of Noir programs are refused (setup_unavailable)")
    }
    const points = Effect.try({ try: () => crsPoints({ path: noir.path }), catch: (e) => new PtauError({ message: `--noir-crs: ${e instanceof Error ? e.message : String(e)}` }) })
    if (!noir.development) {
      const have = yield* points
      return yield* Effect.logInfo(`circuits: UltraHonk CRS ${noir.path} (${have} points: Noir programs up to ${2 ** Math.floor(Math.log2(have - 1))} gates)`)
    }
    yield* prepareDevelopmentNoirCrs(noir).pipe(
      Effect.flatMap((have) =>
        Effect.logWarning(`circuits: DEVELOPMENT UltraHonk CRS ${noir.path} (${have} points); Noir circuits built with it are development_only`)),
      Effect.catchAll((e) => Effect.logError(`circuits: the development UltraHonk CRS could not be made: ${e.message}`)),
      Effect.forkScoped
    )
  })

/**
 * The development UltraHonk CRS, made from a fresh τ (forgotten at once) when the directory does
 * not hold enough points yet: what --dev-ptau gives Noir programs. Whoever runs the machine could
 * have kept τ: development only. Its points.
 */
export const prepareDevelopmentNoirCrs = (noir: { readonly path: string; readonly points: number }): Effect.Effect<number, PtauError> =>
  Effect.gen(function*() {
    const have = yield* Effect.orElseSucceed(Effect.try(() => crsPoints({ path: noir.path })), () => 0)
    if (have >= noir.points) return have
    yield* Effect.tryPromise({
      try: () => writeDevelopmentCrs(noir.path, noir.points),
      catch: (e) => new PtauError({ message: `the development UltraHonk CRS could not be made at ${noir.path}: ${e instanceof Error ? e.message : String(e)}` })
    })
    return noir.points
  })

/** The background loops (`CoreLoops`) over Node's webhook transport. */
export const MzkWorkers = (options: Pick<MzkOptions, "allowInsecureWebhooks">) =>
  CoreLoops.pipe(
    Layer.provide(NodeWebhookTransport({ allowInsecure: options.allowInsecureWebhooks ?? false }))
  )

/** The background loops and the checks a process that runs them makes at start (its ptau). */
export const MzkLoops = (options: Pick<MzkOptions, "allowInsecureWebhooks" | "circuits">) =>
  Layer.merge(MzkWorkers(options), circuitsStartup(options.circuits))

/**
 * The core and, unless `workers` is false, the background loops with what they check at start:
 * what every process of mzk runs beside its way in (HTTP server, worker, embedding). With the loops
 * the prover pool starts with the process (`eager`), so no proof pays for it.
 */
export const MzkServices = (options: MzkOptions & { readonly workers?: boolean | undefined }) =>
  (options.workers === false ? Layer.empty : MzkLoops(options)).pipe(
    Layer.provideMerge(MzkCore({ ...options, startProver: options.startProver ?? (options.workers === false ? "lazy" : "eager") }))
  )

export interface ServeOptions extends MzkOptions {
  readonly port: number
  readonly host: string
  /** Run the background loops in the server process too (default true). */
  readonly workers?: boolean
}

/** The HTTP server on a Node `http.Server`, listening until its scope closes. */
export const MzkServer = (options: ServeOptions) =>
  Layer.unwrapEffect(Effect.map(makeNodeListener, (listener) =>
    // The platform's Node server for listening, its address and a graceful close; mzk's own
    // listener for the requests (see @mzk/http's dispatcher).
    HttpServer.withLogAddress(NodeHttpServer.layer(() => createMzkNodeServer(listener), { port: options.port, host: options.host })))).pipe(
    // Kept in the output, so code running beside the server (tests, CLI tasks) shares its services.
    Layer.provideMerge(MzkServices({ ...options, operations: { ...options.operations, metrics: options.operations?.metrics ?? true } }))
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
export const MzkWorkerProcess = (options: WorkerOptions) => {
  const { port } = options
  const services = MzkServices({
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
