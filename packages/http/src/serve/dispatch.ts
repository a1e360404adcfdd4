import type { HttpApi } from "@effect/platform"
import {
  type ApiKeys,
  type ArtifactDownloads,
  type AuditLog,
  type Verifications,
  type CircuitCompiler,
  Circuits,
  CircuitsConfig,
  type Events,
  Idempotency,
  InternalError,
  InvalidRequest,
  makeAuthenticate,
  type Proofs,
  type SessionAuthenticator,
  Telemetry,
  type WebhookReplay,
  type UsageReports,
  type Webhooks
} from "@mzk/core"
import { Effect } from "effect"
import { MethodNotAllowed, NotFound, ServiceUnavailable, UnsupportedMediaType } from "../api/errors.js"
import { MzkApi } from "../api/index.js"
import type { GroupImplementation } from "../handlers/handler.js"
import { MzkHandlers } from "../handlers/index.js"
import { makeClientAddress, TrustedProxies } from "../wire/clientAddress.js"
import { header, type MzkRequest, type MzkResponse } from "../wire/message.js"
import { tooLarge } from "../wire/precheck.js"
import { makeRequestIds } from "../wire/requestId.js"
import { type CompiledEndpoint, compileApi, type CompileOptions, UnservableApi } from "./compile.js"
import { documentationRoutes } from "./docs.js"
import type { DeclaredError } from "./encode.js"
import { Operations, operationRoutes } from "./operations.js"
import { compose, type Next, type RequestRecord } from "./pipeline.js"
import { makeRouter } from "./router.js"
import { uploadTooLarge } from "./stages/decode.js"
import { compileEndpoint } from "./stages/endpoint.js"
import { locate, openRecord } from "./stages/locate.js"
import { observe } from "./stages/observe.js"
import { makeEncodeError, makeRecover, recoverStage } from "./stages/recover.js"
import { refuse } from "./stages/refuse.js"
import { stamp } from "./stages/stamp.js"

/** Serves one request: never fails; every error is an envelope response. */
export type Dispatch = (request: MzkRequest) => Effect.Effect<MzkResponse>

/** The services mzk's HTTP layer is built over (see `@mzk/server` for the default wiring). */
export type HttpServices =
  ApiKeys | Webhooks | WebhookReplay | Events | Proofs | Circuits | CircuitCompiler | SessionAuthenticator | Idempotency | AuditLog | UsageReports
  | Verifications | ArtifactDownloads

/** A route beside the API's endpoints (documents, probes, metrics): its answer, or a declared error. */
export interface StaticRoute {
  readonly _tag: "Static"
  readonly method: string
  readonly path: string
  readonly respond: (request: MzkRequest) => Effect.Effect<MzkResponse, unknown>
}

type Route = CompiledEndpoint | StaticRoute

/**
 * What an upload endpoint, or a multipart body anywhere, meets once routed (as `precheck` before
 * routing): a body other than multipart where an upload is due, a multipart body where none is
 * (415), or one declared over the endpoint's limit (413 `upload_too_large`, before it is read).
 */
const uploadRefusal = (route: Route, multipart: boolean, request: MzkRequest) => {
  const upload = route._tag === "Endpoint" ? route.upload : undefined
  if (!multipart && upload === undefined) return undefined
  if (upload === undefined) return new UnsupportedMediaType({ message: "Send request bodies as Content-Type: application/json" })
  if (!multipart) return new UnsupportedMediaType({ message: `Send ${route.method} ${route.path} as Content-Type: multipart/form-data` })
  const length = Number(header(request, "content-length") ?? "0")
  return Number.isFinite(length) && length > upload.limitBytes ? uploadTooLarge(upload.limitBytes) : undefined
}

/** Errors the pipeline itself answers with, whatever the endpoint: the API must declare each. */
const DISPATCHER_ERRORS: ReadonlyArray<DeclaredError> = [
  new InvalidRequest({ message: "" }),
  new NotFound({ message: "" }),
  new MethodNotAllowed({ message: "" }),
  tooLarge(),
  new UnsupportedMediaType({ message: "" }),
  new ServiceUnavailable({ message: "" }),
  new InternalError({ message: "" })
]

/**
 * mzk's request handling for an API and its handlers: one pipeline of named stages (`serve/stages/`,
 * outermost first) over an immutable `RequestRecord`:
 *
 *   locate → observe → stamp → recover → refuse → the route: a static answer, or the endpoint's
 *   own stages (authenticate → idempotencyKey → scope (uploads) → controlCharacters → decode →
 *   scope → idempotency → requestContext → handle)
 *
 * mzk serves its API with this rather than HttpApiBuilder's router: the platform's per-request
 * machinery cost about 130 µs of CPU a request, more than the work of a key listing (see
 * docs/performance.md). So every endpoint's chain is compiled once (`compileApi`, then
 * `compileEndpoint`), holding only the stages the endpoint has, and the request path is plain
 * combinators, not generators, for the same reason.
 */
export const makeDispatcherFor = (
  api: HttpApi.HttpApi.Any,
  implementations: ReadonlyArray<GroupImplementation>,
  options: CompileOptions = {}
) =>
  Effect.gen(function*() {
    const compiled = compileApi(api, implementations, options)
    const undeclared = DISPATCHER_ERRORS.filter((error) => compiled.errors(error, "") === undefined).map((error) => error._tag)
    if (undeclared.length > 0) {
      throw new UnservableApi(`The API does not declare errors the dispatcher answers with: ${undeclared.join(", ")}`)
    }
    const operations = yield* Operations
    const encodeError = makeEncodeError(compiled.errors)
    const recover = makeRecover(encodeError)
    const services = {
      authenticate: yield* makeAuthenticate,
      stageUpload: (yield* Circuits).stageUpload,
      idempotency: yield* Idempotency,
      clientAddress: makeClientAddress(yield* TrustedProxies),
      recover
    }
    const chains = new Map(compiled.endpoints.map((endpoint) => [endpoint, compileEndpoint(endpoint, services)]))
    const router = makeRouter<Route>([
      ...compiled.endpoints,
      ...[...yield* documentationRoutes(api), ...operationRoutes(operations)].map((route): StaticRoute => ({ _tag: "Static", ...route }))
    ])
    const serveRoute: Next<RequestRecord<Route>> = (record) => {
      const { match } = record
      if (match._tag !== "Found") return Effect.die("refuse answers every request without a route")
      const route = match.route
      return route._tag === "Static" ? route.respond(record.request) : chains.get(route)!(record)
    }
    type Record = RequestRecord<Route>
    const run = compose<Record>([
      locate({ route: router, precheck: true, refuse: uploadRefusal }),
      observe<Record>(yield* Telemetry, operations.accessLog),
      stamp,
      recoverStage<Record>(recover),
      refuse<Record>(encodeError, { notFound: (method, pathname) => `No route ${method} ${pathname}`, methodNotAllowed: true })
    ], serveRoute)
    const nextRequestId = makeRequestIds()
    // `recover` answers every failure, so the pipeline's run cannot fail whatever its type says.
    const dispatch: Dispatch = (request) => Effect.clockWith((clock) => run(openRecord(request, nextRequestId(clock))) as Effect.Effect<MzkResponse>)
    return dispatch
  })

/** The dispatcher of MzkApi over the core services: what every transport serves, uploads up to `CircuitsConfig.maxUploadBytes`. */
export const makeDispatcher: Effect.Effect<Dispatch, never, HttpServices> = Effect.flatMap(
  Effect.all([MzkHandlers, CircuitsConfig]),
  ([implementations, config]) => makeDispatcherFor(MzkApi, implementations, { uploadLimitBytes: config.maxUploadBytes })
)
