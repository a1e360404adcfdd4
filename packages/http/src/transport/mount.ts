import { Effect } from "effect"
import { DOCS_PATH } from "../serve/docs.js"
import type { BodyError } from "../wire/message.js"
import { MAX_BODY_BYTES } from "../wire/precheck.js"

/** Where MzkApi's routes live (`HttpApi.prefix` in api/index.ts); everything mzk answers but its docs page is under it. */
const API_BASE = "/api/v1"

/** True when `path` starts with `prefix` as whole segments: `/api/v1`, `/api/v1/…` or `/api/v1?…`, not `/api/v10`. */
const startsWithSegments = (path: string, prefix: string, at = 0): boolean => {
  if (!path.startsWith(prefix, at)) return false
  const next = path.charCodeAt(at + prefix.length)
  // NaN (the end), "/" or "?"
  return next !== next || next === 47 || next === 63
}

/** True when mzk routes `path` unchanged: under `/api/v1`, or its docs page. */
export const routesAsIs = (path: string): boolean => startsWithSegments(path, API_BASE) || startsWithSegments(path, DOCS_PATH)

/**
 * The path mzk routes for `path` when the application has a mount point of its own before mzk's
 * `/api/v1` (Express `app.use("/mzk", …)` seen through `originalUrl`, a Fastify prefix, a Next.js
 * route file under `app/mzk/`): the path from `/api/v1` on. `undefined` when `path` has no
 * `/api/v1` and is not the docs page: not mzk's. A path already starting with `/api/v1` is
 * returned as is, so the common case allocates nothing.
 */
export const apiPath = (path: string): string | undefined => {
  if (routesAsIs(path)) return path
  // Only before the query: a query value may contain anything.
  const query = path.indexOf("?")
  for (let at = path.indexOf(API_BASE, 1); at !== -1 && (query === -1 || at < query); at = path.indexOf(API_BASE, at + 1)) {
    if (startsWithSegments(path, API_BASE, at)) return path.slice(at)
  }
  return undefined
}

/**
 * `apiPath`, and for a framework that strips its mount point from the path (Hono's `app.mount`,
 * `hono/mount`) and so may have cut into `/api/v1` itself, the part it cut put back: `/v1/proofs`
 * after `app.mount("/api", …)`, `/proofs` after `app.mount("/api/v1", …)`.
 */
export const mountedPath = (path: string): string => {
  const api = apiPath(path)
  if (api !== undefined) return api
  if (startsWithSegments(path, "/v1")) return `/api${path}`
  return path === "/" || path.startsWith("/?") ? `${API_BASE}${path.slice(1)}` : `${API_BASE}${path}`
}

/** What a framework that already read the body left of it: `rawBody` (Fastify plugins, `verify` hooks) first, then `body`. */
interface Parsed {
  readonly rawBody?: unknown
  readonly body?: unknown
}

const TOO_LARGE: BodyError = { _tag: "BodyTooLarge" }
const UNREADABLE: BodyError = { _tag: "BodyUnreadable" }

const bytesOf = (value: unknown): Uint8Array | string | undefined =>
  typeof value === "string" || value instanceof Uint8Array ? value : undefined

/**
 * The body a framework already consumed, as bytes or text: its raw form where one was kept,
 * else what it parsed (a JSON value, written back as JSON; a Buffer or string from a raw or text
 * parser). `undefined` when nothing usable was left (the stream is gone and the body with it).
 */
export const consumedBody = (request: Parsed): Uint8Array | string | undefined => {
  const raw = bytesOf(request.rawBody)
  if (raw !== undefined) return raw
  const body = request.body
  if (body === undefined || body === null) return undefined
  return bytesOf(body) ?? JSON.stringify(body)
}

const byteLength = (body: Uint8Array | string) => typeof body === "string" ? Buffer.byteLength(body, "utf8") : body.byteLength

/** A consumed body as the dispatcher's JSON body: text, refused past `MAX_BODY_BYTES` as a streamed one is. */
export const consumedText = (body: Uint8Array | string | undefined): Effect.Effect<string, BodyError> => {
  if (body === undefined) return Effect.fail(UNREADABLE)
  if (byteLength(body) > MAX_BODY_BYTES) return Effect.fail(TOO_LARGE)
  return Effect.succeed(typeof body === "string" ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("utf8"))
}

/** A consumed body as an upload: handed to `sink` in one piece, within `limitBytes`. */
export const consumedStream = (body: Uint8Array | string | undefined) =>
(limitBytes: number, sink: (chunk: Uint8Array) => void | Promise<void>): Effect.Effect<void, BodyError> =>
  Effect.suspend((): Effect.Effect<void, BodyError> => {
    if (body === undefined) return Effect.fail(UNREADABLE)
    if (byteLength(body) > limitBytes) return Effect.fail(TOO_LARGE)
    const taken = sink(typeof body === "string" ? Buffer.from(body, "utf8") : body)
    return taken === undefined ? Effect.void : Effect.promise(() => taken)
  })
