import type { ArtifactDownload } from "@mzk/core"
import { Cause, Chunk, Effect, Stream } from "effect"
import { createHash } from "node:crypto"
import { RangeNotSatisfiable } from "../api/errors.js"
import { header, type MzkRequest } from "../wire/message.js"
import type { Answer, RequestRecord } from "./pipeline.js"
import type { Recover } from "./stages/recover.js"

/** A byte range, `end` exclusive. */
interface ByteRange {
  readonly start: number
  readonly end: number
}

/**
 * `Range` (RFC 9110 §14.2) against a file of `size` bytes: one range, or `unsatisfiable` when it
 * starts past the end, or undefined to send the whole file. A header that is not one well-formed
 * byte range (several ranges, another unit, a last position before the first) is ignored, as the
 * RFC lets a server do: the whole file is the correct answer to it.
 */
export const parseRange = (value: string | undefined, size: number): ByteRange | "unsatisfiable" | undefined => {
  if (value === undefined) return undefined
  const match = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(value)
  if (match === null) return undefined
  const [, first = "", last = ""] = match
  if (first === "" && last === "") return undefined
  if (first === "") {
    const suffix = Number(last)
    return suffix === 0 || size === 0 ? "unsatisfiable" : { start: Math.max(0, size - suffix), end: size }
  }
  const start = Number(first)
  if (last !== "" && Number(last) < start) return undefined
  if (start >= size) return "unsatisfiable"
  return { start, end: last === "" ? size : Math.min(Number(last) + 1, size) }
}

/** The entity tags of an `If-None-Match` or `If-Range`, weak ones with their `W/` dropped. */
const tagsOf = (value: string) => value.split(",").map((tag) => tag.trim().replace(/^W\//, ""))

/** SHA-256 of a small file held in memory (the verification key's JSON): its stored digest, where it has none. */
const digestOf = (file: ArtifactDownload) =>
  file.digest !== null
    ? Effect.succeed(file.digest as string)
    : Effect.map(Stream.runCollect(file.bytes.read(0, file.bytes.size)), (chunks) => {
      const hash = createHash("sha256")
      Chunk.forEach(chunks, (chunk) => hash.update(chunk))
      return hash.digest("hex")
    })

const rangeRefused = (record: RequestRecord, size: number, recover: Recover) =>
  Effect.map(
    recover(Cause.fail(new RangeNotSatisfiable({ message: `The file has ${size} bytes; the Range asks for bytes past its end` })), record),
    (answer): Answer => ({ ...answer, headers: { ...answer.headers, "content-range": `bytes */${size}` } })
  )

/**
 * A file as the answer to a GET (or HEAD): its validators (`ETag`, the SHA-256), 304 where
 * `If-None-Match` holds it already, one `Range` as a 206 (unless `If-Range` names another file),
 * and its bytes streamed as they are read, never held whole. The rules of RFC 9110 §13 in the
 * order it evaluates them; dates are no validator here (the file has no `Last-Modified`), so an
 * `If-Range` with one sends the whole file.
 */
export const serveDownload = (record: RequestRecord, file: ArtifactDownload, recover: Recover): Effect.Effect<Answer, unknown> =>
  Effect.flatMap(digestOf(file), (digest) => {
    const { request } = record
    const size = file.bytes.size
    const etag = `"${digest}"`
    const validators = { etag, "cache-control": "private, no-cache" }
    const ifNoneMatch = header(request, "if-none-match")
    if (ifNoneMatch !== undefined && tagsOf(ifNoneMatch).some((tag) => tag === "*" || tag === etag)) {
      return Effect.succeed<Answer>({ status: 304, headers: validators, body: undefined })
    }
    const headers = {
      ...validators,
      "content-type": file.content_type,
      "content-disposition": `attachment; filename="${file.filename}"`,
      "accept-ranges": "bytes"
    }
    const range = rangeOf(request, etag, size)
    if (range === "unsatisfiable") return rangeRefused(record, size, recover)
    const { end, start } = range ?? { start: 0, end: size }
    return Effect.succeed<Answer>({
      status: range === undefined ? 200 : 206,
      headers: range === undefined ? headers : { ...headers, "content-range": `bytes ${start}-${end - 1}/${size}` },
      body: { _tag: "StreamedBody", length: end - start, stream: file.bytes.read(start, end) }
    })
  })

/** The range to send: `Range`, where `If-Range` (if sent) names this very file (a strong match: RFC 9110 §13.1.5). */
const rangeOf = (request: MzkRequest, etag: string, size: number) => {
  const ifRange = header(request, "if-range")
  if (ifRange !== undefined && ifRange.trim() !== etag) return undefined
  return parseRange(header(request, "range"), size)
}
