import { HttpApiSchema } from "@effect/platform"
import {
  boundedMessage,
  ERROR_CODES,
  InvalidRequest,
  makeAuthenticate,
  PayloadTooLarge,
  ServiceUnavailable
} from "@mzk/core"
import { Cause, Effect, FiberRef, Option, ParseResult, Redacted, Schema } from "effect"
import { Authentication, MzkApi } from "./api.js"
import { DOCS_PATH, docsPage, OPENAPI_PATH, openApiDocument } from "./docs.js"
import { CircuitsHandlers, ProofsHandlers } from "./handlers/proofs.js"
import type { HandlerItem } from "./handlers/implement.js"
import { KeysHandlers } from "./handlers/keys.js"
import { WebhooksHandlers } from "./handlers/webhooks.js"
import {
  CurrentRequest,
  errorResponse,
  type ErrorTag,
  finish,
  header,
  JSON_HEADERS,
  requestIdAt,
  MAX_BODY_BYTES,
  type MzkRequest,
  type MzkResponse,
  precheck,
  type RequestState
} from "./requestPipeline.js"
import { makeResponseBody } from "./responseBody.js"
import { makeRouter } from "./routes.js"

/** Serves one request: never fails; every error is an envelope response. */
export type Dispatch = (request: MzkRequest) => Effect.Effect<MzkResponse>

type Input = Parameters<HandlerItem["handler"]>[0]
type Decode = (input: unknown) => Effect.Effect<unknown, ParseResult.ParseError>

interface EndpointRoute {
  readonly _tag: "Endpoint"
  readonly method: string
  readonly path: string
  readonly secured: boolean
  readonly decodePath: Decode | undefined
  readonly decodeUrlParams: Decode | undefined
  readonly decodePayload: Decode | undefined
  readonly successBody: (value: unknown) => string
  readonly status: number
  readonly empty: boolean
  readonly handler: HandlerItem["handler"]
}

interface StaticRoute {
  readonly _tag: "Static"
  readonly method: string
  readonly path: string
  readonly response: Effect.Effect<MzkResponse>
}

const optionalDecoder = (schema: Option.Option<Schema.Schema.Any>): Decode | undefined =>
  Option.isSome(schema) ? (Schema.decodeUnknown(schema.value as Schema.Schema<unknown, unknown>) as Decode) : undefined

/**
 * Everything decided once per endpoint rather than per request: its decoders, its success encoder
 * and status, and whether it takes a bearer token. Decoding follows HttpApiBuilder's rules (the
 * endpoint's own schemas and their annotations), so the OpenAPI
 * document and the typed client describe exactly what is served.
 */
const endpointRoute = ({ endpoint, group, handler }: HandlerItem): EndpointRoute => {
  const groupMiddleware = (MzkApiGroups[group]?.middlewares ?? new Set()) as ReadonlySet<unknown>
  return {
    _tag: "Endpoint",
    method: endpoint.method,
    path: endpoint.path,
    secured: groupMiddleware.has(Authentication) || (endpoint.middlewares as ReadonlySet<unknown>).has(Authentication),
    decodePath: optionalDecoder(endpoint.pathSchema),
    // Every query parameter of MzkApi is one string; a repeated key arrives as an array and fails it.
    decodeUrlParams: optionalDecoder(endpoint.urlParamsSchema),
    decodePayload: optionalDecoder(endpoint.payloadSchema),
    successBody: makeResponseBody(endpoint.successSchema),
    status: HttpApiSchema.getStatusSuccess(endpoint.successSchema),
    empty: HttpApiSchema.isVoid(endpoint.successSchema.ast),
    handler
  }
}

const MzkApiGroups = MzkApi.groups as Record<string, { readonly middlewares: ReadonlySet<unknown> }>

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

/** Schema failures of path, query and body become `invalid_request` with one detail per issue. */
const invalidRequestFrom = (error: ParseResult.ParseError) =>
  Effect.flatMap(ParseResult.ArrayFormatter.formatError(error), (issues) => {
    const details = issues.map((issue) => ({ path: issue.path.map(String).join("."), message: boundedMessage(issue.message) }))
    const summary = details.map((d) => (d.path === "" ? d.message : `${d.path}: ${d.message}`)).join("; ")
    return Effect.fail(new InvalidRequest({ message: `Invalid request: ${summary}`, details }))
  })

const notJson = () => new InvalidRequest({ message: "The request body is not valid JSON" })

const readJson = (request: MzkRequest) =>
  request.body.pipe(
    Effect.mapError((error) =>
      error._tag === "BodyTooLarge" ? new PayloadTooLarge({ message: `The request body is over ${MAX_BODY_BYTES} bytes (1 MiB)` }) : notJson()
    ),
    Effect.flatMap((text) => Effect.try({ try: () => JSON.parse(text) as unknown, catch: notJson }))
  )

// Storage failures carry driver text (paths, SQL); clients get a fixed sentence instead.
const publicMessage = (tag: ErrorTag, message: string) =>
  tag === "StorageError" ? "Storage is temporarily unavailable; retry later" : message

const isKnownError = (error: unknown): error is { readonly _tag: ErrorTag; readonly message: string; readonly details?: unknown } =>
  typeof error === "object" && error !== null && "_tag" in error && typeof error._tag === "string" &&
  Object.hasOwn(ERROR_CODES, error._tag) && "message" in error && typeof error.message === "string"

/** A failed request → its envelope: typed errors by their code, anything else a logged 500. */
const recover = (cause: Cause.Cause<unknown>, requestId: string): Effect.Effect<MzkResponse> => {
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure) && isKnownError(failure.value)) {
    const error = failure.value
    const details = Array.isArray(error.details) ? error.details : undefined
    return Effect.succeed(errorResponse(error._tag, publicMessage(error._tag, error.message), requestId, details))
  }
  // Schema failures quote the offending value; a body nested thousands deep overflows the stack
  // while that text is built. It is still just a body that fails validation.
  const defect = Option.getOrUndefined(Cause.dieOption(cause))
  if (defect instanceof RangeError && /call stack/i.test(defect.message)) {
    return Effect.succeed(errorResponse("InvalidRequest", "The request body is nested too deeply", requestId))
  }
  if (Cause.isInterruptedOnly(cause)) {
    const stopping = new ServiceUnavailable({ message: "The server is shutting down; retry" })
    return Effect.succeed(errorResponse("ServiceUnavailable", stopping.message, requestId))
  }
  return Effect.logError("Unhandled error in request", cause).pipe(
    Effect.as(errorResponse("InternalError", "An unexpected error occurred", requestId))
  )
}

/**
 * mzk's request handling, built once from MzkApi and the handler groups: routing (404, 405 with
 * `Allow`), the 413/415 checks, bearer authentication, decoding, the handler, the success encoding,
 * `Request-Id`, the RateLimit fields, and the error envelope on every error.
 *
 * mzk serves MzkApi with this rather than HttpApiBuilder's router: the platform's per-request
 * machinery cost about 130 µs of CPU a request, more than the work of a key listing (see the server
 * README's benchmark). The definition still drives decoding, the OpenAPI document and the client.
 */
export const makeDispatcher = Effect.gen(function*() {
  const authenticate = yield* makeAuthenticate
  const items = [
    ...(yield* KeysHandlers),
    ...(yield* WebhooksHandlers),
    ...(yield* ProofsHandlers),
    ...(yield* CircuitsHandlers)
  ]
  const docs = yield* Effect.cached(docsPage)
  const openApi = JSON.stringify(openApiDocument)
  const route = makeRouter<EndpointRoute | StaticRoute>([
    ...items.map(endpointRoute),
    { _tag: "Static", method: "GET", path: OPENAPI_PATH, response: Effect.succeed({ status: 200, headers: { "content-type": "application/json" }, body: openApi }) },
    { _tag: "Static", method: "GET", path: DOCS_PATH, response: docs }
  ])

  /** The endpoint's steps, chained only as far as it has them (every request runs this). */
  const serve = (
    endpoint: EndpointRoute,
    params: Record<string, string>,
    search: string,
    request: MzkRequest,
    state: RequestState
  ): Effect.Effect<MzkResponse, unknown> => {
    const input: { -readonly [K in keyof Input]: Input[K] } = {}
    const steps: Array<Effect.Effect<void, unknown>> = []
    if (endpoint.secured) {
      const token = Redacted.make(bearerToken(header(request, "authorization")))
      steps.push(Effect.map(authenticate(token), (principal) => void (state.principal = principal)))
    }
    const { decodePath, decodePayload, decodeUrlParams } = endpoint
    if (decodePath !== undefined) steps.push(Effect.map(decodePath(params), (path) => void (input.path = path)))
    if (decodePayload !== undefined) {
      steps.push(Effect.map(Effect.flatMap(readJson(request), decodePayload), (payload) => void (input.payload = payload)))
    }
    if (decodeUrlParams !== undefined) {
      steps.push(Effect.suspend(() => Effect.map(decodeUrlParams(queryParams(search)), (urlParams) => void (input.urlParams = urlParams))))
    }
    const answer = Effect.map(
      Effect.suspend(() => endpoint.handler(input) as Effect.Effect<unknown, unknown>),
      (value): MzkResponse =>
        endpoint.empty
          ? { status: endpoint.status, headers: {}, body: undefined }
          : { status: endpoint.status, headers: JSON_HEADERS, body: endpoint.successBody(value) }
    )
    const all = steps.reduceRight<Effect.Effect<MzkResponse, unknown>>((next, step) => Effect.zipRight(step, next), answer)
    return Effect.catchIf(all, ParseResult.isParseError, invalidRequestFrom)
  }

  const dispatch: Dispatch = (request) =>
    Effect.clockWith((clock) => {
      const requestId = requestIdAt(clock)
      const state: RequestState = { principal: undefined }
      const early = precheck(request, requestId)
      if (early !== undefined) return Effect.succeed(finish(early, requestId, state))
      const target = requestTarget(request.url)
      const queryAt = target.indexOf("?")
      const pathname = queryAt === -1 ? target : target.slice(0, queryAt)
      const search = queryAt === -1 ? "" : target.slice(queryAt + 1)
      // HEAD is GET without the body (RFC 9110 §9.3.2): routed and served as GET; the server
      // adapters send the head only.
      const match = route(request.method === "HEAD" ? "GET" : request.method, pathname)
      if (match._tag === "NotFound") {
        return Effect.succeed(finish(errorResponse("NotFound", `No route ${request.method} ${pathname}`, requestId), requestId, state))
      }
      if (match._tag === "MethodNotAllowed") {
        const allowed = match.allowed.flatMap((method) => (method === "GET" ? ["GET", "HEAD"] : [method])).join(", ")
        const refused = errorResponse("MethodNotAllowed", `${request.method} is not allowed on ${pathname}; allowed: ${allowed}`, requestId)
        return Effect.succeed(finish({ ...refused, headers: { ...refused.headers, allow: allowed } }, requestId, state))
      }
      // The request's cell is set for the handlers and put back after (`Effect.locally` cost a dozen
      // operations; `recover` answers every failure, so the restore always runs but on interruption).
      const served = match.route._tag === "Static"
        ? match.route.response
        : Effect.flatMap(FiberRef.getAndSet(CurrentRequest, state), (outside) =>
          // Suspended, so code that throws while the steps are built (an embedder's session check)
          // is a defect that `recover` answers, not one that ends the request without an answer.
          Effect.suspend(() => serve(match.route as EndpointRoute, match.params as Record<string, string>, search, request, state)).pipe(
            Effect.catchAllCause((cause) => recover(cause, requestId)),
            Effect.zipLeft(FiberRef.set(CurrentRequest, outside))
          ))
      return Effect.map(served, (response) => finish(response, requestId, state))
    })

  return dispatch
})
