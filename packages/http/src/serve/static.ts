import { createHash } from "node:crypto"
import { promisify } from "node:util"
import { brotliCompress, constants, gzip } from "node:zlib"
import { Effect } from "effect"
import { header, type MzkRequest, type MzkResponse } from "../wire/message.js"

/**
 * Responses that never change while the server runs (the docs page, the OpenAPI document): each
 * encoding is compressed once and kept, then every request picks one by `Accept-Encoding` and is
 * answered 304 when it already holds it. The docs page is 3.3 MB of mostly inlined script, which
 * Brotli brings to about 0.8 MB.
 */

/**
 * How long a browser or proxy may reuse a copy without asking: the content changes only when the
 * server is upgraded, so a short lifetime shows a new version within minutes, and asking after
 * that costs a 304 (the ETag) rather than the page again.
 */
export const STATIC_CACHE_CONTROL = "public, max-age=300"

type Coding = "br" | "gzip" | "identity"

interface Representation {
  readonly coding: Coding
  readonly body: Uint8Array
  readonly etag: string
}

/** The codings offered, best first: among codings a client weighs the same, the smaller wins. */
const OFFERED: ReadonlyArray<Coding> = ["br", "gzip", "identity"]

/**
 * `Accept-Encoding` (RFC 9110 §12.5.3) → the coding to send. A coding the header does not name is
 * acceptable only through `*`, except `identity`, which is acceptable unless refused (`;q=0`);
 * no header at all means identity. When a client refuses everything, identity is sent anyway
 * (the RFC allows it, and a 406 for the docs page helps nobody).
 */
export const chooseCoding = (acceptEncoding: string | undefined): Coding => {
  if (acceptEncoding === undefined) return "identity"
  const weights = new Map<string, number>()
  for (const part of acceptEncoding.split(",")) {
    const [name, ...params] = part.trim().toLowerCase().split(";")
    if (name === undefined || name === "") continue
    const q = params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)).find((m) => m !== null)
    const weight = q == null ? 1 : Number(q[1])
    weights.set(name, Number.isFinite(weight) ? weight : 0)
  }
  const weightOf = (coding: Coding) => weights.get(coding) ?? weights.get("*") ?? (coding === "identity" ? 1 : 0)
  let best: Coding = "identity"
  let bestWeight = 0
  for (const coding of OFFERED) {
    const weight = weightOf(coding)
    if (weight > bestWeight) {
      best = coding
      bestWeight = weight
    }
  }
  return best
}

const etagOf = (body: Uint8Array, coding: Coding) => {
  const digest = createHash("sha256").update(body).digest("base64url").slice(0, 27)
  // Each encoding is its own representation (RFC 9110 §8.8.3), so each has its own strong tag.
  return coding === "identity" ? `"${digest}"` : `"${digest}-${coding}"`
}

/**
 * `If-None-Match` holds the tag of the representation this request would get, or `*`: a cache
 * holding the gzip copy that asks for a Brotli client must get the Brotli one, not a 304.
 */
const alreadyHeld = (ifNoneMatch: string | undefined, chosen: Representation) => {
  if (ifNoneMatch === undefined) return false
  const tags = ifNoneMatch.split(",").map((tag) => tag.trim().replace(/^W\//, ""))
  return tags.includes("*") || tags.includes(chosen.etag)
}

const brotli = promisify(brotliCompress)
const gzipped = promisify(gzip)

/**
 * A static response over `body`: compressed on the libuv pool (so compressing the docs page never
 * stalls the requests being served meanwhile) the first time it is asked for, then kept. Brotli
 * runs at quality 9: quality 11 saves another 10% of the docs page but takes 6 s of CPU rather
 * than 0.4 s.
 */
export const staticAsset = (
  body: Effect.Effect<string>,
  headers: Readonly<Record<string, string>>
): Effect.Effect<(request: MzkRequest) => MzkResponse> =>
  Effect.gen(function*() {
    const text = yield* body
    const identity = Buffer.from(text, "utf8")
    const [br, gz] = yield* Effect.promise(() =>
      Promise.all([
        brotli(identity, {
          params: {
            [constants.BROTLI_PARAM_QUALITY]: 9,
            [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
            [constants.BROTLI_PARAM_SIZE_HINT]: identity.byteLength
          }
        }),
        gzipped(identity, { level: 9 })
      ])
    )
    const representations: ReadonlyArray<Representation> = [
      { coding: "br", body: br, etag: etagOf(identity, "br") },
      { coding: "gzip", body: gz, etag: etagOf(identity, "gzip") },
      { coding: "identity", body: identity, etag: etagOf(identity, "identity") }
    ]
    return (request: MzkRequest): MzkResponse => {
      const coding = chooseCoding(header(request, "accept-encoding"))
      const chosen = representations.find((r) => r.coding === coding)!
      const validators = { etag: chosen.etag, "cache-control": STATIC_CACHE_CONTROL, vary: "Accept-Encoding" }
      if (alreadyHeld(header(request, "if-none-match"), chosen)) return { status: 304, headers: validators, body: undefined }
      return {
        status: 200,
        headers: { ...headers, ...validators, ...(coding === "identity" ? {} : { "content-encoding": coding }) },
        body: chosen.body
      }
    }
  })
