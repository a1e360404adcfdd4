import type { HttpApi } from "@effect/platform"
import {
  actorOf,
  withAuditContext,
  type ApiKeys,
  type AuditLog,
  type CircuitCompiler,
  CONTROL_CHARACTERS_REFUSED,
  Circuits,
  CircuitsConfig,
  type Events,
  Idempotency,
  idempotencyKeyProblem,
  type ErrorDetail,
  hasControlCharacters,
  InternalError,
  InvalidRequest,
  invalidRequest,
  invalidRequestFromParseError,
  isStorageError,
  logFailure,
  logStorageFailure,
  makeAuthenticate,
  missingScope,
  type Principal,
  type Proofs,
  type RateLimitWindow,
  requestFingerprint,
  type StorageError,
  type StoredResponse,
  type SessionAuthenticator,
  Telemetry,
  type WebhookReplay,
  type Webhooks
} from "@mzk/core"
import { Cause, Effect, Exit, Option, ParseResult, Redacted, Runtime, Scope, Stream } from "effect"
import { MethodNotAllowed, NotFound, type PayloadTooLarge, ServiceUnavailable, UnsupportedMediaType, UploadTooLarge } from "../api/errors.js"
import { MzkApi } from "../api/index.js"
import type { GroupImplementation } from "../handlers/handler.js"
import { MzkHandlers } from "../handlers/index.js"
import { header, type MzkRequest, type MzkResponse } from "../wire/message.js"
import { makeFormParser, type PartCut, type StagePart } from "../wire/multipart.js"
import { MULTIPART_BODY, precheck, tooLarge } from "../wire/precheck.js"
import { rateLimitHeaders } from "../wire/rateLimit.js"
import { makeRequestIds } from "../wire/requestId.js"
import { makeClientAddress, TrustedProxies } from "../wire/clientAddress.js"
import { type CompiledEndpoint, compileApi, type CompileOptions, UnservableApi } from "./compile.js"
import { documentationRoutes } from "./docs.js"
import { Operations, operationRoutes } from "./operations.js"
import type { DeclaredError } from "./encode.js"
import { makeRouter } from "./router.js"

/** Serves one request: never fails; every error is an envelope response. */
export type Dispatch = (request: MzkRequest) => Effect.Effect<MzkResponse>

/** The services mzk's HTTP layer is built over (see `@mzk/server` for the default wiring). */
export type HttpServices = ApiKeys | Webhooks | WebhookReplay | Events | Proofs | Circuits | CircuitCompiler | SessionAuthenticator | Idempotency | AuditLog

/** A route beside the API's endpoints (documents, probes, metrics): its answer, or a declared error. */
interface StaticRoute {
  readonly _tag: "Static"
  readonly method: string
  readonly path: string
  readonly respond: (request: MzkRequest) => Effect.Effect<MzkResponse, unknown>
}

/**
 * What a request's answer carries besides its body: the rate-limit windows a metered endpoint
 * reported; and the route's template, for metrics and the access log.
 */
interface Notes {
  route?: string
  rateLimit?: ReadonlyArray<RateLimitWindow>
  retryAfterSeconds?: number
}

/** The client's `User-Agent`, cut to what an audit entry keeps. */
const userAgent = (request: MzkRequest): string | null => {
  const value = header(request, "user-agent")
  return value === undefined ? null : value.slice(0, 512)
}

/** Query string → record, a repeated key as an array of its values (as the platform's UrlParams). */
const queryParams = (search: string) => {
  const out: Record<string, string | Array<string>> = {}
  for (const [key, value] of new URLSearchParams(search)) {
    const seen = out[key]
    out[key] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value]
  }
  return out
}

/**
 * A path parameter or query value holding a control character (C0, DEL, C1; percent-encoded, as
 * `%00`): a 400 naming each, on every endpoint, before anything decodes the value or looks it up.
 * None has a meaning in an id, a name or a filter, and Postgres `text` cannot hold a NUL, which it
 * answered with an error (a 503) where SQLite looked the value up and found nothing (a 404).
 */
const controlCharacters = (
  params: Readonly<Record<string, string>>,
  query: Readonly<Record<string, string | ReadonlyArray<string>>>
): InvalidRequest | undefined => {
  let refused: Array<ErrorDetail> | undefined
  const check = (name: string, value: string) => {
    if (hasControlCharacters(value)) (refused ??= []).push({ path: name, message: CONTROL_CHARACTERS_REFUSED })
  }
  for (const name in params) check(name, params[name]!)
  for (const name in query) {
    const value = query[name]!
    if (typeof value === "string") check(name, value)
    else for (const one of value) check(name, one)
  }
  return refused === undefined ? undefined : invalidRequest(refused)
}

const NO_QUERY: Readonly<Record<string, string>> = {}

/**
 * The token of an `Authorization: Bearer <token>` header, or "" (refused as a missing key) for any
 * other scheme. RFC 9110 §11.1: the scheme is case-insensitive; RFC 6750 §2.1: one or more spaces.
 */
const BEARER = /^bearer +/i
const bearerToken = (authorization: string | undefined): string => {
  const scheme = authorization === undefined ? null : BEARER.exec(authorization)
  return scheme === null ? "" : authorization!.slice(scheme[0].length)
}

/** Path and query of a request target; an absolute-form target (`http://host/path`, as a proxy is sent) gives its path. */
const requestTarget = (url: string) => {
  if (url.startsWith("/")) return url
  try {
    const parsed = new URL(url)
    return parsed.pathname + parsed.search
  } catch {
    return url
  }
}

const notJson = () => new InvalidRequest({ message: "The request body is not valid JSON" })

/** The body as JSON; `seen` gets its text (what an idempotency key's fingerprint covers). */
const readJson = (request: MzkRequest, seen?: (text: string) => void) =>
  request.body.pipe(
    Effect.mapError((error) => (error._tag === "BodyTooLarge" ? tooLarge() : notJson())),
    Effect.flatMap((text) => {
      seen?.(text)
      return Effect.try({ try: () => JSON.parse(text) as unknown, catch: notJson })
    })
  )

/**
 * Results a retry must not replay (Stripe's rule): the request failed validation (400, also when a
 * service judged the input, e.g. proof inputs against their circuit), was refused before it ran
 * (429) or could not run (503); a corrected retry with the same key runs.
 */
const replayable = (response: MzkResponse) => response.status !== 400 && response.status !== 429 && response.status !== 503

const MIB = 1024 * 1024

export const uploadTooLarge = (limitBytes: number) =>
  new UploadTooLarge({
    message: `The upload is over this server's upload limit of ${limitBytes} bytes` +
      (limitBytes % MIB === 0 ? ` (${limitBytes / MIB} MiB)` : "")
  })

const notForm = () => new InvalidRequest({ message: "The request body could not be read" })

const PART_CUT: PartCut = { _tag: "PartCut" }

/**
 * An upload's form, parsed as the body streams in, refused past the endpoint's limit. Staged parts
 * go to `stage` as they arrive, in the request's scope: the staged artifacts live until the
 * request ends, for the handler to publish. However the read ends, every staging has stopped
 * before this does, so the scope's end finds nothing still writing.
 */
const readForm = (request: MzkRequest, upload: NonNullable<CompiledEndpoint["upload"]>, stage: Circuits["Type"]["stageUpload"]) =>
  Effect.flatMap(Effect.all([Effect.scope, Effect.runtime<never>()]), ([scope, runtime]) => {
    const runFork = Runtime.runFork(runtime)
    const stagePart: StagePart = (part) =>
      new Promise((resolve) => {
        const chunks = Stream.fromAsyncIterable(part as AsyncIterable<Uint8Array>, () => PART_CUT)
        runFork(Scope.extend(stage(chunks), scope)).addObserver(resolve)
      })
    const parser = makeFormParser(header(request, "content-type") ?? "", upload.form, stagePart)
    return request.stream(upload.limitBytes, parser.write).pipe(
      Effect.mapError((error) => (error._tag === "BodyTooLarge" ? uploadTooLarge(upload.limitBytes) : notForm())),
      Effect.zipRight(parser.end),
      Effect.onExit((exit) => (Exit.isSuccess(exit) ? Effect.void : Effect.promise(parser.abort)))
    )
  })

/**
 * What an upload endpoint, or a multipart body anywhere, meets once routed (as `precheck` before
 * routing): a body other than multipart where an upload is due, a multipart body where none is
 * (415), or one declared over the endpoint's limit (413 `upload_too_large`, before it is read).
 */
const uploadRefusal = (route: CompiledEndpoint | StaticRoute, multipart: boolean, request: MzkRequest) => {
  const upload = route._tag === "Endpoint" ? route.upload : undefined
  if (upload === undefined) return new UnsupportedMediaType({ message: "Send request bodies as Content-Type: application/json" })
  if (!multipart) return new UnsupportedMediaType({ message: `Send ${route.method} ${route.path} as Content-Type: multipart/form-data` })
  const length = Number(header(request, "content-length") ?? "0")
  return Number.isFinite(length) && length > upload.limitBytes ? uploadTooLarge(upload.limitBytes) : undefined
}

/** Errors the dispatcher itself answers with, whatever the endpoint: the API must declare each. */
const DISPATCHER_ERRORS: ReadonlyArray<DeclaredError> = [
  new InvalidRequest({ message: "" }),
  new NotFound({ message: "" }),
  new MethodNotAllowed({ message: "" }),
  tooLarge(),
  new UnsupportedMediaType({ message: "" }),
  new ServiceUnavailable({ message: "" }),
  new InternalError({ message: "" })
]

const isDeclaredError = (error: unknown): error is DeclaredError =>
  typeof error === "object" && error !== null && "_tag" in error && typeof error._tag === "string" &&
  "message" in error && typeof error.message === "string"

const isRateLimited = (error: unknown): error is { readonly windows: ReadonlyArray<RateLimitWindow>; readonly retry_after_seconds: number } =>
  isDeclaredError(error) && error._tag === "RateLimitExceeded"

/**
 * mzk's request handling for an API and its handlers, compiled once by `compileApi`: routing (404,
 * 405 with `Allow`), the 413/415 checks, bearer authentication, decoding, the endpoint's scope,
 * the handler, the success encoding, `Request-Id`, the RateLimit fields of metered endpoints, and
 * the error envelope, encoded from the API's own error schemas, on every error.
 *
 * mzk serves its API with this rather than HttpApiBuilder's router: the platform's per-request
 * machinery cost about 130 µs of CPU a request, more than the work of a key listing (see
 * docs/performance.md). The request path is plain combinators, not generators, for the same reason.
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
    const authenticate = yield* makeAuthenticate
    const { stageUpload } = yield* Circuits
    const idempotency = yield* Idempotency
    const telemetry = yield* Telemetry
    const operations = yield* Operations
    const clientAddress = makeClientAddress(yield* TrustedProxies)
    const nextRequestId = makeRequestIds()
    const route = makeRouter<CompiledEndpoint | StaticRoute>([
      ...compiled.endpoints,
      ...[...yield* documentationRoutes(api), ...operationRoutes(operations)].map((route): StaticRoute => ({ _tag: "Static", ...route }))
    ])

    const encodeError = (error: DeclaredError, requestId: string): Effect.Effect<MzkResponse> => {
      const response = compiled.errors(error, requestId)
      if (response !== undefined) return Effect.succeed(response)
      return Effect.logError("An error the API does not declare", Cause.fail(error)).pipe(
        Effect.as(compiled.errors(new InternalError({ message: "An unexpected error occurred" }), requestId)!)
      )
    }

    /** A failed request → its envelope: declared errors by their schema, anything else a logged 500. */
    const recover = (cause: Cause.Cause<unknown>, requestId: string, notes: Notes): Effect.Effect<MzkResponse> => {
      const failure = Cause.failureOption(cause)
      if (Option.isSome(failure)) {
        const error = failure.value
        if (isRateLimited(error)) {
          notes.rateLimit = error.windows
          notes.retryAfterSeconds = error.retry_after_seconds
        }
        if (isStorageError(error)) {
          // The client's 503 says only that storage is unavailable: the why goes to the log, once per failure.
          const logged = logStorageFailure("request failed: storage unavailable", error, { request_id: requestId, route: notes.route ?? "unmatched" })
          return Effect.zipRight(logged, encodeError(error, requestId))
        }
        if (isDeclaredError(error)) return encodeError(error, requestId)
      }
      // Schema failures quote the offending value; a body nested thousands deep overflows the stack
      // while that text is built (a RangeError, or the FiberFailure of the formatter's own run).
      // It is still just a body that fails validation.
      const defect = Option.getOrUndefined(Cause.dieOption(cause))
      if (defect instanceof Error && /maximum call stack/i.test(defect.message)) {
        return encodeError(new InvalidRequest({ message: "The request body is nested too deeply" }), requestId)
      }
      if (Cause.isInterruptedOnly(cause)) {
        return encodeError(new ServiceUnavailable({ message: "The server is shutting down; retry" }), requestId)
      }
      return Effect.logError("Unhandled error in request", cause).pipe(
        Effect.zipRight(encodeError(new InternalError({ message: "An unexpected error occurred" }), requestId))
      )
    }

    /** What is kept of a response for replays: all of it, but the fields the endpoint shows once. */
    const kept = (endpoint: CompiledEndpoint, response: MzkResponse): StoredResponse => {
      // An endpoint answers text; only the static documents are bytes.
      let body = response.body === undefined ? null : typeof response.body === "string" ? response.body : new TextDecoder().decode(response.body)
      if (body !== null && endpoint.replayWithout.length > 0 && response.status < 300) {
        const value = JSON.parse(body) as Record<string, unknown>
        for (const field of endpoint.replayWithout) value[field] = null
        body = JSON.stringify(value)
      }
      return { status: response.status, headers: response.headers, body }
    }

    /**
     * The request's handling under its `Idempotency-Key` (POST only): the first request with the
     * key runs and its response, errors included, is kept; a retry gets that response replayed,
     * marked `Idempotent-Replayed: true`, without running (no rate limit or quota is charged).
     * A 400, 429 or 503 frees the key instead, as does a request stopped midway.
     */
    const idempotent = (
      endpoint: CompiledEndpoint,
      principal: Principal,
      key: string,
      fingerprint: string,
      requestId: string,
      notes: Notes,
      run: Effect.Effect<MzkResponse, unknown>
    ): Effect.Effect<MzkResponse, unknown> =>
      Effect.flatMap(idempotency.begin(principal.account_id, key, fingerprint, requestId), (begun) => {
        if (begun._tag === "Replay") {
          const { body, headers, status } = begun.response
          return Effect.succeed<MzkResponse>({
            status,
            headers: { ...headers, "idempotent-replayed": "true", "original-request": begun.original_request_id },
            body: body ?? undefined
          })
        }
        const settle = (response: MzkResponse) =>
          (replayable(response)
            ? idempotency.finish(principal.account_id, key, requestId, kept(endpoint, response))
            : idempotency.abandon(principal.account_id, key, requestId)
          ).pipe(
            Effect.catchAllCause((cause) =>
              logFailure("idempotency key could not be settled; it frees itself when its lock lapses", cause, { level: "Warning", annotations: { request_id: requestId } }))
          )
        return run.pipe(
          Effect.catchAllCause((cause) => recover(cause, requestId, notes)),
          Effect.tap(settle),
          Effect.onInterrupt(() => Effect.ignore(idempotency.abandon(principal.account_id, key, requestId)))
        )
      })

    /** The endpoint's steps, chained only as far as it has them (every request runs this). */
    const serve = (
      endpoint: CompiledEndpoint,
      params: Record<string, string>,
      pathname: string,
      search: string,
      request: MzkRequest,
      requestId: string,
      notes: Notes
    ): Effect.Effect<MzkResponse, unknown> => {
      const input: { principal: Principal | undefined; path: unknown; payload: unknown; urlParams: unknown } = {
        principal: undefined,
        path: undefined,
        payload: undefined,
        urlParams: undefined
      }
      const steps: Array<Effect.Effect<void, unknown, Scope.Scope>> = []
      const idempotencyKey = endpoint.idempotent ? header(request, "idempotency-key") : undefined
      // What the key is bound to besides method and path: the JSON body's text, or an upload's length.
      let fingerprintBody = header(request, "content-length") ?? ""
      if (endpoint.secured) {
        const token = Redacted.make(bearerToken(header(request, "authorization")))
        steps.push(Effect.map(authenticate(token), (principal) => void (input.principal = principal)))
      }
      if (idempotencyKey !== undefined) {
        const problem = idempotencyKeyProblem(idempotencyKey)
        if (problem !== undefined) {
          steps.push(Effect.fail(new InvalidRequest({ message: `Idempotency-Key ${problem}`, details: [{ path: "Idempotency-Key", message: problem }] })))
        }
      }
      const { decodePath, decodePayload, decodeUrlParams, scope, upload } = endpoint
      // An upload may be tens of MiB: a key that may not upload is refused before it is read.
      if (upload !== undefined && scope !== undefined) {
        steps.push(Effect.suspend(() => {
          const denied = missingScope(input.principal!, scope)
          return denied === undefined ? Effect.void : Effect.fail(denied)
        }))
      }
      const query = search === "" ? NO_QUERY : queryParams(search)
      const controls = controlCharacters(params, query)
      if (controls !== undefined) steps.push(Effect.fail(controls))
      if (decodePath !== undefined) steps.push(Effect.map(decodePath(params), (path) => void (input.path = path)))
      if (decodePayload !== undefined) {
        const body: Effect.Effect<unknown, InvalidRequest | PayloadTooLarge | UploadTooLarge | StorageError, Scope.Scope> = upload === undefined
          ? readJson(request, idempotencyKey === undefined ? undefined : (text) => void (fingerprintBody = text))
          : readForm(request, upload, stageUpload)
        steps.push(Effect.map(Effect.flatMap(body, decodePayload), (payload) => void (input.payload = payload)))
      }
      if (decodeUrlParams !== undefined) {
        steps.push(Effect.suspend(() => Effect.map(decodeUrlParams(query), (urlParams) => void (input.urlParams = urlParams))))
      }
      const handle = Effect.suspend(() => endpoint.handler(input as Parameters<CompiledEndpoint["handler"]>[0]))
      // Who changes what, for the audit log: only requests that may change something carry it.
      const audited = endpoint.secured && endpoint.method !== "GET"
        ? Effect.suspend(() =>
          withAuditContext({
            actor: actorOf(input.principal!),
            request_id: requestId,
            ip_address: clientAddress(request),
            user_agent: userAgent(request)
          })(handle)
        )
        : handle
      const run = Effect.map(
        audited,
        (result): MzkResponse => {
          let value = result
          if (endpoint.metered) {
            const answered = result as { readonly value: unknown; readonly rate_limits: ReadonlyArray<RateLimitWindow> }
            notes.rateLimit = answered.rate_limits
            value = answered.value
          }
          return endpoint.empty
            ? { status: endpoint.status, headers: {}, body: undefined }
            : { status: endpoint.status, headers: endpoint.successHeaders, body: endpoint.successBody(value) }
        }
      )
      // The scope is checked last before the handler, after decoding, as it always was (and, for
      // uploads, before reading them too); an idempotency key is claimed only by a request that may run.
      const answer = Effect.suspend(() => {
        const denied = scope === undefined ? undefined : missingScope(input.principal!, scope)
        if (denied !== undefined) return Effect.fail(denied)
        if (idempotencyKey === undefined || input.principal === undefined) return run
        const fingerprint = requestFingerprint(request.method, pathname, fingerprintBody)
        return idempotent(endpoint, input.principal, idempotencyKey, fingerprint, requestId, notes, run)
      })
      const chained = steps.reduceRight<Effect.Effect<MzkResponse, unknown, Scope.Scope>>((next, step) => Effect.zipRight(step, next), answer)
      // An upload's staged parts live until its answer: published by the handler, or dropped. Only
      // an upload reads its body into the scope; other requests are spared making one.
      const all = upload === undefined ? (chained as Effect.Effect<MzkResponse, unknown>) : Effect.scoped(chained)
      // Suspended: describing a failure of a body nested thousands deep overflows the stack, a
      // defect that `recover` answers as such.
      return Effect.catchIf(all, ParseResult.isParseError, (error) => Effect.suspend(() => Effect.fail(invalidRequestFromParseError(error))))
    }

    /** `Request-Id` on every response; the RateLimit fields and `Retry-After` a metered endpoint reported. */
    const finish = (response: MzkResponse, requestId: string, notes: Notes): MzkResponse => ({
      ...response,
      headers: {
        ...response.headers,
        ...(notes.rateLimit === undefined ? {} : rateLimitHeaders(notes.rateLimit)),
        ...(notes.retryAfterSeconds === undefined ? {} : { "retry-after": String(notes.retryAfterSeconds) }),
        "request-id": requestId
      }
    })

    /** The request's answer, before `finish`; `notes` collects what `finish` adds, and the route. */
    const answer = (request: MzkRequest, requestId: string, notes: Notes): Effect.Effect<MzkResponse> => {
      const early = precheck(request)
      if (early !== undefined && early !== MULTIPART_BODY) return encodeError(early, requestId)
      const target = requestTarget(request.url)
      const queryAt = target.indexOf("?")
      const pathname = queryAt === -1 ? target : target.slice(0, queryAt)
      const search = queryAt === -1 ? "" : target.slice(queryAt + 1)
      const match = route(request.method, pathname)
      if (match._tag === "NotFound") return encodeError(new NotFound({ message: `No route ${request.method} ${pathname}` }), requestId)
      if (match._tag === "MethodNotAllowed") {
        const allowed = match.allowed.join(", ")
        const refused = encodeError(new MethodNotAllowed({ message: `${request.method} is not allowed on ${pathname}; allowed: ${allowed}` }), requestId)
        return Effect.map(refused, (response) => ({ ...response, headers: { ...response.headers, allow: allowed } }))
      }
      const matched = match.route
      notes.route = matched.path
      if (early === MULTIPART_BODY || (matched._tag === "Endpoint" && matched.upload !== undefined)) {
        const refused = uploadRefusal(matched, early === MULTIPART_BODY, request)
        if (refused !== undefined) return encodeError(refused, requestId)
      }
      // Suspended, so code that throws while the steps are built (an embedder's session check)
      // is a defect that `recover` answers, not one that ends the request without an answer.
      return Effect.suspend(() =>
        matched._tag === "Static"
          ? matched.respond(request)
          : serve(matched, match.params as Record<string, string>, pathname, search, request, requestId, notes)
      ).pipe(Effect.catchAllCause((cause) => recover(cause, requestId, notes)))
    }

    /** One line per request when the access log is on: never the query, a header or a body. */
    const accessLog = (request: MzkRequest, response: MzkResponse, requestId: string, route: string, seconds: number) => {
      const queryAt = request.url.indexOf("?")
      return Effect.annotateLogs(Effect.logInfo("request"), {
        event: "http.request",
        method: request.method,
        route,
        path: queryAt === -1 ? request.url : request.url.slice(0, queryAt),
        status: response.status,
        duration_ms: Math.round(seconds * 1e6) / 1e3,
        request_id: requestId
      })
    }

    /** Every answer finished, counted by route and status for the metrics, and logged when asked. */
    const dispatch: Dispatch = (request) =>
      Effect.clockWith((clock) => {
        const startNs = clock.unsafeCurrentTimeNanos()
        const requestId = nextRequestId(clock)
        const notes: Notes = {}
        return Effect.flatMap(answer(request, requestId, notes), (answered) => {
          const response = finish(answered, requestId, notes)
          const seconds = Number(clock.unsafeCurrentTimeNanos() - startNs) / 1e9
          const route = notes.route ?? "unmatched"
          telemetry.request({ method: request.method, route, status: response.status, seconds })
          return operations.accessLog ? Effect.as(accessLog(request, response, requestId, route, seconds), response) : Effect.succeed(response)
        })
      })

    return dispatch
  })

/** The dispatcher of MzkApi over the core services: what every transport serves, uploads up to `CircuitsConfig.maxUploadBytes`. */
export const makeDispatcher: Effect.Effect<Dispatch, never, HttpServices> = Effect.flatMap(
  Effect.all([MzkHandlers, CircuitsConfig]),
  ([implementations, config]) => makeDispatcherFor(MzkApi, implementations, { uploadLimitBytes: config.maxUploadBytes })
)

