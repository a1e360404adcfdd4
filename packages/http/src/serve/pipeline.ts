import type { Principal, RateLimitWindow } from "@mzk/core"
import type { Effect } from "effect"
import type { MzkRequest, MzkResponse } from "../wire/message.js"
import type { RouteMatch } from "./router.js"

/**
 * What the stages know of one request, filled in as it goes down the pipeline. Immutable: a stage
 * that learns something hands its successor a new record (`{ ...record, principal }`), so what a
 * stage reads is what the stages before it decided, never what a later one changed.
 */
export interface RequestRecord<out Route = unknown> {
  readonly request: MzkRequest
  readonly requestId: string
  /** The request target's path and query string (without `?`). */
  readonly pathname: string
  readonly search: string
  /** What `locate` found: the route and its parameters, or why there is none. */
  readonly match: RouteMatch<Route>
  /** A refusal `precheck` or `locate` decided before any route ran (413, 415). */
  readonly refused: unknown
  /** The route's template for metrics and the access log ("unmatched" where none matched). */
  readonly route: string
  readonly params: Readonly<Record<string, string>>
  readonly query: Readonly<Record<string, string | ReadonlyArray<string>>>
  readonly principal: Principal | undefined
  readonly idempotencyKey: string | undefined
  /** What an idempotency key is bound to besides method and path: the JSON body's text, or an upload's length. */
  readonly fingerprintBody: string
  readonly path: unknown
  readonly payload: unknown
  readonly urlParams: unknown
}

/**
 * A response on its way out, with what only the encoding stage (`stamp`) turns into headers: the
 * rate-limit windows a metered endpoint or its 429 reported. They are not headers yet so that an
 * idempotency key keeps the response without them (a replay is charged nothing).
 */
export interface Answer extends MzkResponse {
  readonly rateLimit?: ReadonlyArray<RateLimitWindow>
  readonly retryAfterSeconds?: number
}

export type Next<R, Env = never> = (record: R) => Effect.Effect<Answer, unknown, Env>

/** One step of the request path: it answers, or hands a (new) record to the rest of the pipeline. */
export type Stage<R, Env = never> = (record: R, next: Next<R, Env>) => Effect.Effect<Answer, unknown, Env>

/**
 * The stages, outermost first, run as one function ending in `last` (Hono's `compose`, built once
 * rather than per request: every endpoint's chain is put together when the API is compiled).
 */
export const compose = <R, Env = never>(stages: ReadonlyArray<Stage<R, Env> | undefined>, last: Next<R, Env>): Next<R, Env> =>
  stages.reduceRight<Next<R, Env>>((next, stage) => (stage === undefined ? next : (record) => stage(record, next)), last)
