import { logStorageFailure, NO_TELEMETRY, ProofsRepo, StorageHealth, Telemetry, type TelemetryShape } from "@mzk/core"
import { type MetricsExposition, Operations, type OperationsShape, type ReadinessCheck } from "@mzk/http"
import { Duration, Effect, Layer, Option, Runtime } from "effect"
import { createHash, timingSafeEqual } from "node:crypto"
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client"

export interface OperationsOptions {
  /** Keep metrics and serve `/metrics` (`mzk serve` does; default false, and `registry` implies it). */
  readonly metrics?: boolean | undefined
  /** When set, `/metrics` answers only `Authorization: Bearer <token>`. */
  readonly metricsToken?: string | undefined
  /** One log line per request. */
  readonly accessLog?: boolean | undefined
  /**
   * A prom-client registry to add mzk's metrics to (an application's own, scraped at its own
   * `/metrics`); default a registry of mzk's own with Node's process metrics.
   */
  readonly registry?: Registry | undefined
  /** How the prover starts, for `/readyz`: loaded before serving, or on the first proof (set by `CoreServicesLive`). */
  readonly prover?: "eager" | "lazy" | undefined
}

/** Methods as labels: the ones HTTP defines; anything else one value, so a caller cannot mint series. */
const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])

const SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
const PROVING_SECONDS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300]

/**
 * mzk's metrics on prom-client and the `Telemetry` port that moves them. Accounts' own circuits
 * are one `circuit="uploaded"` series: their names are the accounts' business, and one series per
 * uploaded circuit would grow without bound (the logs carry each proof's circuit id).
 */
export const makeMetrics = (registry: Registry) => {
  const registers = [registry]
  const requests = new Counter({ name: "mzk_http_requests_total", help: "HTTP requests answered, by route template and status", labelNames: ["method", "route", "status"], registers })
  const requestSeconds = new Histogram({ name: "mzk_http_request_duration_seconds", help: "Time to answer an HTTP request", labelNames: ["method", "route"], buckets: SECONDS, registers })
  const proofs = new Counter({ name: "mzk_proofs_total", help: "Proofs that moved to a status (queued, running, completed, failed, canceled, expired)", labelNames: ["status", "circuit"], registers })
  const provingSeconds = new Histogram({ name: "mzk_proof_duration_seconds", help: "Proving time of settled proofs", labelNames: ["circuit", "status"], buckets: PROVING_SECONDS, registers })
  const attempts = new Counter({ name: "mzk_webhook_attempts_total", help: "Webhook delivery attempts, by outcome", labelNames: ["outcome"], registers })
  const attemptSeconds = new Histogram({ name: "mzk_webhook_attempt_duration_seconds", help: "Time a receiver took to answer a delivery attempt", labelNames: ["outcome"], buckets: SECONDS, registers })
  const deliveries = new Counter({ name: "mzk_webhook_deliveries_total", help: "Deliveries settled: succeeded, or failed once every retry was spent or the endpoint answered 410 Gone", labelNames: ["outcome"], registers })
  const refusals = new Counter({ name: "mzk_rate_limit_refusals_total", help: "Metered requests refused with 429, by policy (key: per minute; daily: per account)", labelNames: ["policy"], registers })

  const telemetry: TelemetryShape = {
    request: ({ method: asked, route, seconds, status }) => {
      const method = METHODS.has(asked) ? asked : "OTHER"
      requests.inc({ method, route, status })
      requestSeconds.observe({ method, route }, seconds)
    },
    proof: ({ builtin, circuit, duration_ms, status }) => {
      const label = builtin ? circuit : "uploaded"
      proofs.inc({ status, circuit: label })
      if (duration_ms !== undefined) provingSeconds.observe({ circuit: label, status }, duration_ms / 1000)
    },
    delivery: ({ final, latency_ms, outcome }) => {
      attempts.inc({ outcome })
      attemptSeconds.observe({ outcome }, latency_ms / 1000)
      if (final) deliveries.inc({ outcome })
    },
    rateLimited: (policy) => refusals.inc({ policy })
  }
  return telemetry
}

/** Bearer token check in constant time: both sides hashed first, so lengths give nothing away. */
const tokenCheck = (token: string) => {
  const expected = createHash("sha256").update(token).digest()
  return (authorization: string | undefined) => {
    const given = /^bearer +(.*)$/i.exec(authorization ?? "")?.[1] ?? ""
    return timingSafeEqual(createHash("sha256").update(given).digest(), expected)
  }
}

const READINESS_TIMEOUT = Duration.seconds(2)

/**
 * What `/readyz` asks: the database answers and takes a one-row write (within 2 s), its schema has
 * every migration of this code, and the prover's state. A write that fails names its reason (mzk's
 * sentence: "the disk is full (SQLITE_FULL)", "the database file was replaced or deleted…"), which
 * names no path, query or value; the database's own error text goes to the log, one error line per
 * failed probe, as the probe is unauthenticated.
 */
const readiness = (prover: "eager" | "lazy") =>
  Effect.gen(function*() {
    const storage = yield* StorageHealth
    return Effect.map(
      storage.check.pipe(
        Effect.timeoutFail({ duration: READINESS_TIMEOUT, onTimeout: () => "timed out" as const }),
        Effect.tap((status) =>
          status.writeFailure === undefined
            ? Effect.void
            : logStorageFailure("readiness: the database did not take a write", status.writeFailure, { probe: "readiness" })
        ),
        Effect.tapError((error) =>
          error === "timed out"
            ? Effect.logError("readiness: the database did not answer within 2 s")
            : logStorageFailure("readiness: the database check failed", error, { probe: "readiness" })
        ),
        Effect.either
      ),
      (result): Record<string, ReadinessCheck> => {
        const writeFailure = result._tag === "Right" ? result.right.writeFailure : undefined
        const database: ReadinessCheck = result._tag === "Left"
          ? { ok: false, message: result.left === "timed out" ? "no answer within 2 s" : "unreachable" }
          : writeFailure !== undefined
          ? { ok: false, message: `writes fail: ${writeFailure.message}` }
          : { ok: true, message: "reachable, takes writes" }
        const pending = result._tag === "Right" ? result.right.pendingMigrations : undefined
        const migrations: ReadinessCheck = pending === undefined
          ? { ok: false, message: "unknown: the database is unreachable" }
          : pending.length === 0
          ? { ok: true, message: "applied" }
          : { ok: false, message: `${pending.length} pending (${pending.join(", ")}): run mzk migrate` }
        return {
          database,
          migrations,
          prover: { ok: true, message: prover === "eager" ? "loaded" : "loads on first use" }
        }
      }
    )
  })

/**
 * The operational side of a process: `Telemetry` on prom-client and what `/healthz`, `/readyz`
 * and `/metrics` answer (`Operations`). The queue depth is read from the database at scrape time,
 * so every process reports the shared queue.
 */
export const OperationsLive = (options: OperationsOptions = {}): Layer.Layer<Telemetry | Operations, never, StorageHealth | ProofsRepo> =>
  Layer.unwrapEffect(Effect.gen(function*() {
    const checks = yield* readiness(options.prover ?? "eager")
    const accessLog = options.accessLog ?? false
    if (options.metrics !== true && options.registry === undefined) {
      return Layer.merge(Layer.succeed(Operations, { readiness: checks, metrics: Option.none(), accessLog }), Layer.succeed(Telemetry, NO_TELEMETRY))
    }
    const registry = options.registry ?? new Registry()
    if (options.registry === undefined) collectDefaultMetrics({ register: registry })
    const telemetry = makeMetrics(registry)
    const repo = yield* ProofsRepo
    const run = Runtime.runPromise(yield* Effect.runtime<never>())
    new Gauge({
      name: "mzk_proof_queue_depth",
      help: "Proofs queued and running, over every process sharing the database (aggregate with max, not sum)",
      labelNames: ["status"],
      registers: [registry],
      async collect() {
        const depth = await run(Effect.either(Effect.timeout(repo.queueDepth, READINESS_TIMEOUT)))
        // No answer: no value, rather than the last one passed off as current.
        if (depth._tag === "Left") return this.reset()
        this.set({ status: "queued" }, depth.right.queued)
        this.set({ status: "running" }, depth.right.running)
      }
    })
    const exposition: MetricsExposition = {
      contentType: registry.contentType,
      render: Effect.promise(() => registry.metrics()),
      authorize: options.metricsToken === undefined || options.metricsToken === "" ? () => true : tokenCheck(options.metricsToken)
    }
    const operations: OperationsShape = { readiness: checks, metrics: Option.some(exposition), accessLog }
    return Layer.merge(Layer.succeed(Operations, operations), Layer.succeed(Telemetry, telemetry))
  }))
