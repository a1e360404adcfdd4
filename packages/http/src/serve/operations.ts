import { Context, Effect, Option } from "effect"
import { InvalidApiKey } from "@mzk/core"
import { header, JSON_HEADERS, type MzkRequest, type MzkResponse } from "../wire/message.js"

/** One readiness check: what it found, in a sentence an operator can act on. */
export interface ReadinessCheck {
  readonly ok: boolean
  readonly message: string
}

/** The Prometheus exposition of the process's metrics, and who may read it. */
export interface MetricsExposition {
  readonly contentType: string
  readonly render: Effect.Effect<string>
  /** Whether a request's `Authorization` header may read the metrics (a token check, or always). */
  readonly authorize: (authorization: string | undefined) => boolean
}

/**
 * What the operational endpoints answer with, supplied by the composition root (`@mzk/server`
 * wires the database, the prover and prom-client); the default has no checks and no metrics.
 */
export interface OperationsShape {
  readonly readiness: Effect.Effect<Readonly<Record<string, ReadinessCheck>>>
  readonly metrics: Option.Option<MetricsExposition>
  /** One log line per request answered (method, route, path, status, duration, request id). */
  readonly accessLog: boolean
}

export class Operations extends Context.Reference<Operations>()("@mzk/http/Operations", {
  defaultValue: (): OperationsShape => ({ readiness: Effect.succeed({}), metrics: Option.none(), accessLog: false })
}) {}

export const HEALTH_PATH = "/healthz"
export const READY_PATH = "/readyz"
export const METRICS_PATH = "/metrics"

/** Probes must never be cached by a proxy in between: a stale "ready" is worse than none. */
const NO_STORE = { "cache-control": "no-store" }

const json = (status: number, body: unknown): MzkResponse => ({ status, headers: { ...JSON_HEADERS, ...NO_STORE }, body: JSON.stringify(body) })

/** A route the dispatcher serves beside the API: its answer may depend on the request, and may be a declared error. */
export interface OperationRoute {
  readonly method: "GET"
  readonly path: string
  readonly respond: (request: MzkRequest) => Effect.Effect<MzkResponse, InvalidApiKey>
}

/**
 * The operational endpoints, outside `/api/v1` and without API keys: `/healthz` (the process
 * serves; nothing else is asked, so a slow database never gets it restarted), `/readyz` (200 when
 * every check passes, else 503 naming what failed: a load balancer's signal) and, when metrics are
 * on, `/metrics` in Prometheus text format, behind its token when one is set.
 */
export const operationRoutes = (operations: OperationsShape): ReadonlyArray<OperationRoute> => {
  const routes: Array<OperationRoute> = [
    { method: "GET", path: HEALTH_PATH, respond: () => Effect.succeed(json(200, { status: "ok" })) },
    {
      method: "GET",
      path: READY_PATH,
      respond: () =>
        Effect.map(operations.readiness, (checks) => {
          const ready = Object.values(checks).every((check) => check.ok)
          return json(ready ? 200 : 503, { status: ready ? "ready" : "not_ready", checks })
        })
    }
  ]
  if (Option.isSome(operations.metrics)) {
    const exposition = operations.metrics.value
    const headers = { "content-type": exposition.contentType, ...NO_STORE }
    routes.push({
      method: "GET",
      path: METRICS_PATH,
      respond: (request) =>
        exposition.authorize(header(request, "authorization"))
          ? Effect.map(exposition.render, (body): MzkResponse => ({ status: 200, headers, body }))
          : Effect.fail(new InvalidApiKey({ message: "The metrics need this server's metrics token: send Authorization: Bearer <token>" }))
    })
  }
  return routes
}
