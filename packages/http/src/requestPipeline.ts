import { ERROR_CODES, type ErrorDetail, formatId, type Principal, type RandomBits, randomBitsFrom, type RateLimitWindow } from "@mzk/core"
import { type Clock, Effect, FiberRef } from "effect"

export const MAX_BODY_BYTES = 1024 * 1024

/** A request as the dispatcher sees it, whatever server it came from. */
export interface MzkRequest {
  readonly method: string
  /** The path and query, e.g. `/api/v1/proofs?limit=5`. */
  readonly url: string
  /** Header names in lower case. */
  readonly headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
  /** The whole body as text, read on demand, refused past `MAX_BODY_BYTES`. */
  readonly body: Effect.Effect<string, BodyError>
}

export type BodyError = { readonly _tag: "BodyTooLarge" } | { readonly _tag: "BodyUnreadable" }

/** A response as the dispatcher answers; `body` undefined sends none (204). */
export interface MzkResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: string | undefined
}

/**
 * What one request carries besides its input: who asks, once the bearer token is checked, and
 * what a handler leaves for the response (rate-limit windows). A mutable cell per request, set in
 * a FiberRef once: the dispatcher writes the principal, handlers read it and write the notes.
 * Providing the principal as a Context service instead copied the whole service context on every
 * request, about 25 µs of CPU a key listing in the server (measured).
 */
export interface RequestState {
  principal: Principal | undefined
  rateLimit?: ReadonlyArray<RateLimitWindow>
  retryAfterSeconds?: number
}
export const CurrentRequest = FiberRef.unsafeMake<RequestState | undefined>(undefined)

/**
 * Random bytes for request ids, drawn from Web Crypto a page at a time: one `getRandomValues` call
 * per request cost several microseconds (a native job each), a slice of a pooled page almost none.
 * Request ids are not secrets, so pooling their randomness exposes nothing.
 */
const POOL_BYTES = 4096
let pool = new Uint8Array(0)
let poolAt = POOL_BYTES
const randomBits80 = (): RandomBits => {
  if (poolAt + 10 > pool.length) {
    pool = globalThis.crypto.getRandomValues(new Uint8Array(POOL_BYTES))
    poolAt = 0
  }
  const bits = randomBitsFrom(pool, poolAt)
  poolAt += 10
  return bits
}

/**
 * A fresh `req_…` id, as every response carries in `Request-Id`: the time from `Clock`, 80 random
 * bits from Web Crypto. Request ids need uniqueness only, not the `Entropy` port's determinism nor
 * ordering within a millisecond, so they skip both (made on every request, that saves ~10 µs).
 */
export const makeRequestId: Effect.Effect<string> = Effect.clockWith((clock) => Effect.sync(() => requestIdAt(clock)))

/** `makeRequestId` for a caller already holding the fiber's `Clock`. */
export const requestIdAt = (clock: Clock.Clock): string => formatId("request", clock.unsafeCurrentTimeMillis(), randomBits80())

export type ErrorTag = keyof typeof ERROR_CODES

/** The error envelope: `{"error": {code, message, request_id, details?}}`. */
export const errorBody = (tag: ErrorTag, message: string, requestId: string, details?: ReadonlyArray<ErrorDetail>) => ({
  error: { code: ERROR_CODES[tag].code, message, request_id: requestId, ...(details ? { details } : {}) }
})

export const JSON_HEADERS = { "content-type": "application/json" } as const

export const jsonResponse = (status: number, body: unknown, headers: Readonly<Record<string, string>> = {}): MzkResponse => ({
  status,
  headers: { ...JSON_HEADERS, ...headers },
  body: JSON.stringify(body)
})

export const errorResponse = (
  tag: ErrorTag,
  message: string,
  requestId: string,
  details?: ReadonlyArray<ErrorDetail>
): MzkResponse => jsonResponse(ERROR_CODES[tag].status, errorBody(tag, message, requestId, details))

export const header = (request: Pick<MzkRequest, "headers">, name: string): string | undefined => {
  const value = request.headers[name]
  return typeof value === "string" ? value : value?.[0]
}

const hasBody = (request: Pick<MzkRequest, "headers">) => {
  const length = header(request, "content-length")
  return length !== undefined ? Number(length) > 0 : header(request, "transfer-encoding") !== undefined
}

const isJson = (contentType: string | undefined) =>
  contentType !== undefined && /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i.test(contentType.trim())

export const tooLarge = (requestId: string) =>
  errorResponse("PayloadTooLarge", `The request body is over ${MAX_BODY_BYTES} bytes (1 MiB)`, requestId)

/**
 * True when the request sends a body that `precheck` lets through (JSON, declared length within
 * 1 MiB or none): a server adapter may read it before dispatching rather than on demand.
 */
export const sendsAcceptableBody = (request: Pick<MzkRequest, "headers">): boolean =>
  hasBody(request) && !(Number(header(request, "content-length") ?? "0") > MAX_BODY_BYTES) &&
  isJson(header(request, "content-type"))

/** Errors a request can meet before it is routed: too large, not JSON. */
export const precheck = (request: MzkRequest, requestId: string): MzkResponse | undefined => {
  const length = Number(header(request, "content-length") ?? "0")
  if (Number.isFinite(length) && length > MAX_BODY_BYTES) return tooLarge(requestId)
  const contentType = header(request, "content-type")
  const sendsBody = hasBody(request) || ["POST", "PUT", "PATCH"].includes(request.method)
  const declaredOther = contentType !== undefined && contentType !== "" && !isJson(contentType)
  if (sendsBody && (declaredOther || (hasBody(request) && !isJson(contentType)))) {
    return errorResponse("UnsupportedMediaType", "Send request bodies as Content-Type: application/json", requestId)
  }
  return undefined
}

/** The IETF RateLimit fields: the policies, and the remaining budget of the tightest one. */
export const rateLimitHeaders = (windows: ReadonlyArray<RateLimitWindow>) => {
  const tightest = [...windows].sort((a, b) => a.remaining - b.remaining || b.reset_seconds - a.reset_seconds)[0]
  return {
    "ratelimit-policy": windows.map((w) => `"${w.policy}";q=${w.limit};w=${w.window_seconds}`).join(", "),
    ...(tightest === undefined ? {} : { ratelimit: `"${tightest.policy}";r=${tightest.remaining};t=${tightest.reset_seconds}` })
  }
}

/** `Request-Id` on every response; the RateLimit fields and `Retry-After` a metered handler left. */
export const finish = (response: MzkResponse, requestId: string, notes: RequestState): MzkResponse => ({
  ...response,
  headers: {
    ...response.headers,
    ...(notes.rateLimit === undefined ? {} : rateLimitHeaders(notes.rateLimit)),
    ...(notes.retryAfterSeconds === undefined ? {} : { "retry-after": String(notes.retryAfterSeconds) }),
    "request-id": requestId
  }
})
