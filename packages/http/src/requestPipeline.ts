import { HttpBody, type HttpApp, HttpIncomingMessage, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { ERROR_CODES, Entropy, type ErrorDetail, makeId, type RateLimitWindow } from "@mzk/core"
import { Cause, Effect, FiberRef, Option } from "effect"
import type { RouteTable } from "./routes.js"

export const MAX_BODY_BYTES = 1024 * 1024

/**
 * What a handler leaves for the response that the framework's typed responses cannot carry
 * (rate-limit headers). A FiberRef holding a mutable cell: handlers write, the pipeline reads.
 */
export interface RequestNotes {
  rateLimit?: ReadonlyArray<RateLimitWindow>
  retryAfterSeconds?: number
}
export const CurrentRequestNotes = FiberRef.unsafeMake<RequestNotes>({})

// Request ids need no determinism, only uniqueness; Web Crypto keeps this module portable.
const webEntropy = Entropy.of({
  bytes: (length) => Effect.sync(() => globalThis.crypto.getRandomValues(new Uint8Array(length)))
})

/** A fresh `req_…` id, as every response carries in `Request-Id`. */
export const makeRequestId: Effect.Effect<string> = makeId("request").pipe(Effect.provideService(Entropy, webEntropy))

type ErrorTag = keyof typeof ERROR_CODES

/** The error envelope: `{"error": {code, message, request_id, details?}}`. */
export const errorBody = (tag: ErrorTag, message: string, requestId: string, details?: ReadonlyArray<ErrorDetail>) => ({
  error: { code: ERROR_CODES[tag].code, message, request_id: requestId, ...(details ? { details } : {}) }
})

export const errorResponse = (tag: ErrorTag, message: string, requestId: string, details?: ReadonlyArray<ErrorDetail>) =>
  HttpServerResponse.unsafeJson(errorBody(tag, message, requestId, details), { status: ERROR_CODES[tag].status })

const hasBody = (request: HttpServerRequest.HttpServerRequest) => {
  const length = request.headers["content-length"]
  return length !== undefined ? Number(length) > 0 : request.headers["transfer-encoding"] !== undefined
}

const isJson = (contentType: string | undefined) =>
  contentType !== undefined && /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i.test(contentType.trim())

/** Errors a request can meet before it reaches the API: too large, not JSON. */
const precheck = (request: HttpServerRequest.HttpServerRequest, requestId: string) => {
  const length = Number(request.headers["content-length"] ?? "0")
  if (Number.isFinite(length) && length > MAX_BODY_BYTES) {
    return Option.some(errorResponse("PayloadTooLarge", `The request body is over ${MAX_BODY_BYTES} bytes (1 MiB)`, requestId))
  }
  const contentType = request.headers["content-type"]
  const sendsBody = hasBody(request) || ["POST", "PUT", "PATCH"].includes(request.method)
  const declaredOther = contentType !== undefined && contentType !== "" && !isJson(contentType)
  if (sendsBody && (declaredOther || (hasBody(request) && !isJson(contentType)))) {
    return Option.some(errorResponse("UnsupportedMediaType", "Send request bodies as Content-Type: application/json", requestId))
  }
  return Option.none()
}

const maxBytesExceeded = (defect: unknown) =>
  typeof defect === "object" && defect !== null && "_tag" in defect && defect._tag === "RequestError" &&
  "cause" in defect && defect.cause instanceof Error && defect.cause.message === "maxBytes exceeded"

const isRequestDecodeError = (defect: unknown) =>
  typeof defect === "object" && defect !== null && "_tag" in defect && defect._tag === "RequestError"

/** Turns what escaped the API (unknown routes, unreadable bodies, defects) into the error envelope. */
const recover = (cause: Cause.Cause<unknown>, request: HttpServerRequest.HttpServerRequest, routes: RouteTable, requestId: string) => {
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure) && typeof failure.value === "object" && failure.value !== null && "_tag" in failure.value && failure.value._tag === "RouteNotFound") {
    const path = new URL(request.url, "http://mzk.invalid").pathname
    const allowed = routes.allowed(path)
    return Effect.succeed(
      allowed.length > 0
        ? errorResponse("MethodNotAllowed", `${request.method} is not allowed on ${path}; allowed: ${allowed.join(", ")}`, requestId)
          .pipe(HttpServerResponse.setHeader("allow", allowed.join(", ")))
        : errorResponse("NotFound", `No route ${request.method} ${path}`, requestId)
    )
  }
  const defect = Option.getOrUndefined(Cause.dieOption(cause))
  if (maxBytesExceeded(defect)) {
    return Effect.succeed(errorResponse("PayloadTooLarge", `The request body is over ${MAX_BODY_BYTES} bytes (1 MiB)`, requestId))
  }
  // Schema failures quote the offending value; a body nested thousands deep overflows the stack
  // while that text is built. It is still just a body that fails validation.
  if (defect instanceof RangeError && /call stack/i.test(defect.message)) {
    return Effect.succeed(errorResponse("InvalidRequest", "The request body is nested too deeply", requestId))
  }
  if (isRequestDecodeError(defect)) {
    return Effect.succeed(errorResponse("InvalidRequest", "The request body is not valid JSON", requestId))
  }
  if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause as Cause.Cause<never>)
  return Effect.logError("Unhandled error in request", cause).pipe(
    Effect.as(errorResponse("InternalError", "An unexpected error occurred", requestId))
  )
}

/** Adds `request_id` to error bodies the framework encoded, and the envelope to bodiless errors. */
const finish = (response: HttpServerResponse.HttpServerResponse, requestId: string, notes: RequestNotes) => {
  let out = response
  if (response.status >= 400) {
    const body = response.body
    if (body._tag === "Uint8Array") {
      try {
        const parsed = JSON.parse(new TextDecoder().decode(body.body)) as { error?: Record<string, unknown> }
        if (typeof parsed.error === "object" && parsed.error !== null) {
          out = HttpServerResponse.setBody(out, HttpBody.unsafeJson({ error: { ...parsed.error, request_id: requestId } }))
        }
      } catch {
        // Not JSON: leave it as it is.
      }
    } else if (body._tag === "Empty") {
      const tag = (Object.keys(ERROR_CODES) as Array<ErrorTag>).find((t) => ERROR_CODES[t].status === response.status) ?? "InternalError"
      out = HttpServerResponse.setBody(out, HttpBody.unsafeJson(errorBody(tag, "The request failed", requestId)))
    }
  }
  if (notes.rateLimit !== undefined) {
    out = HttpServerResponse.setHeaders(out, rateLimitHeaders(notes.rateLimit))
  }
  if (notes.retryAfterSeconds !== undefined) out = HttpServerResponse.setHeader(out, "retry-after", String(notes.retryAfterSeconds))
  return HttpServerResponse.setHeader(out, "request-id", requestId)
}

/** The IETF RateLimit fields: the policies, and the remaining budget of the tightest one. */
export const rateLimitHeaders = (windows: ReadonlyArray<RateLimitWindow>) => {
  const tightest = [...windows].sort((a, b) => a.remaining - b.remaining || b.reset_seconds - a.reset_seconds)[0]
  return {
    "ratelimit-policy": windows.map((w) => `"${w.policy}";q=${w.limit};w=${w.window_seconds}`).join(", "),
    ...(tightest === undefined ? {} : { ratelimit: `"${tightest.policy}";r=${tightest.remaining};t=${tightest.reset_seconds}` })
  }
}

/**
 * The outermost middleware: a `Request-Id` on every response, the 413 and 415 checks, the body size
 * cap while reading, and the error envelope on every error, including the router's 404/405 and
 * malformed JSON, which never reach the API's own error handling.
 */
export const requestPipeline = (routes: RouteTable) => <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<never, R> =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const requestId = yield* makeRequestId
    const notes: RequestNotes = {}
    const early = precheck(request, requestId)
    const response = Option.isSome(early) ? early.value : yield* app.pipe(
      HttpIncomingMessage.withMaxBodySize(Option.some(MAX_BODY_BYTES)),
      Effect.locally(CurrentRequestNotes, notes),
      Effect.catchAllCause((cause) => recover(cause, request, routes, requestId))
    )
    return finish(response, requestId, notes)
  })
