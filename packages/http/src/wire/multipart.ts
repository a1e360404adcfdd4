import { type ErrorDetail, invalidRequest, InvalidRequest, type StagedArtifact, type StorageError, storedTextProblem } from "@mzk/core"
import busboy from "busboy"
import { Effect, Exit } from "effect"
import type { Readable } from "node:stream"

/** One file part of a `multipart/form-data` body, whole in memory (the route's body limit bounds it): small parts only. */
export interface FormFile {
  /** The part's `filename` (`filename*` decoded), path included, as the client sent it; checking it is the endpoint's business. */
  readonly filename: string | undefined
  /** Lower case, without parameters; `text/plain` where the part declares none (RFC 7578 §4.4). */
  readonly contentType: string
  readonly bytes: Uint8Array
}

/** A file part that went to artifact storage as it arrived (`FormPartSpec.staged`), never whole in memory. */
export interface StagedFormFile {
  readonly filename: string | undefined
  readonly contentType: string
  readonly staged: StagedArtifact
}

/** What the form of an endpoint takes, by part name: a text field or a file, once or repeated. */
export interface FormPartSpec {
  readonly file: boolean
  readonly repeated: boolean
  /** A file part that may be sent as a text field instead (`main`: a file, or with `archive` a path in it). */
  readonly orText?: boolean
  /** A file handed to the parser's `stage` as it streams in, instead of kept as bytes. */
  readonly staged?: boolean
}

export interface FormSpec {
  readonly parts: ReadonlyMap<string, FormPartSpec>
  readonly maxParts: number
  readonly maxFieldBytes: number
}

/** A parsed form: each part by name, a repeated part as an array, in the shape the endpoint's schema decodes. */
export type Form = Record<string, string | FormFile | StagedFormFile | Array<string | FormFile>>

/**
 * Where staged parts go: the part's bytes as a stream (it fails if the body is cut short), to the
 * staged artifact or the storage's failure. The parser waits for every staging before it answers.
 */
export type StagePart = (part: Readable) => Promise<Exit.Exit<StagedArtifact, StorageError | PartCut>>

/** A staged part's stream failed: the body was cut short or refused (the form's own error says why). */
export interface PartCut {
  readonly _tag: "PartCut"
}

export interface FormParser {
  /**
   * Feeds the next chunk of the body; after a failure the rest is ignored (it is still read, within
   * the limit). A promise when the parser wants no more until it settles: a staged part is written
   * no faster than storage takes it, so a fast client does not fill memory.
   */
  readonly write: (chunk: Uint8Array) => void | Promise<void>
  /** The form once the body has ended and every staged part is stored, or why it is refused, naming the part. */
  readonly end: Effect.Effect<Form, InvalidRequest | StorageError>
  /** Drops what was parsed so far (the body was refused) and settles once every staged part has stopped. */
  readonly abort: () => Promise<void>
}

const refusal = (message: string, details: ReadonlyArray<ErrorDetail>) => new InvalidRequest({ message, details })

const BAD_BODY = "The multipart/form-data body is malformed"
const malformed = (path: string, message: string) => refusal(BAD_BODY, [{ path, message }])

/**
 * A streaming `multipart/form-data` parser (busboy) for one endpoint's form: file parts are kept
 * as bytes, or handed to `stage` as they stream where the form marks them `staged` (a zkey may be
 * 0.5 GB), text fields as strings, and anything the form does not declare is refused with the
 * part's name in `details` rather than silently dropped, as JSON bodies refuse excess properties.
 * Chunks are fed as the transport reads them, so a body is never held twice (raw and parsed).
 *
 * busboy rather than multipasta (the parser @effect/platform uses): multipasta 0.2.8 fails valid
 * bodies whose chunks happen to split a part's leading CRLF or headers (a test feeds every split).
 */
export const makeFormParser = (contentType: string, spec: FormSpec, stage?: StagePart): FormParser => {
  const form: Form = {}
  let failure: InvalidRequest | undefined
  let storageFailure: StorageError | undefined
  const stagings: Array<Promise<void>> = []
  const fail = (error: InvalidRequest) => {
    failure ??= error
  }
  const add = (name: string, value: string | FormFile | StagedFormFile) => {
    const declared = spec.parts.get(name)!
    const seen = form[name]
    if (!declared.repeated) {
      if (seen !== undefined) fail(refusal("A form part is sent more than once", [{ path: name, message: "send this part once" }]))
      form[name] = value
    } else if (seen === undefined) form[name] = [value as string | FormFile]
    // Staged parts are never repeated (`compileApi` refuses such a form).
    else (seen as Array<string | FormFile>).push(value as string | FormFile)
  }
  const known = [...spec.parts.keys()].join(", ")
  const unknown = (name: string | undefined) =>
    refusal("The form has a part it does not take", [{ path: name || "body", message: `unknown part; the form takes ${known}` }])

  let parser: busboy.Busboy
  try {
    parser = busboy({
      headers: { "content-type": contentType },
      // Source files' paths in the upload are their filenames (`lib/util.circom`).
      preservePath: true,
      defParamCharset: "utf8",
      limits: { parts: spec.maxParts, fieldSize: spec.maxFieldBytes }
    })
  } catch {
    const failed = malformed("body", "Content-Type multipart/form-data needs a boundary parameter")
    return { write: () => undefined, end: Effect.fail(failed), abort: () => Promise.resolve() }
  }
  parser.on("field", (name, value, info) => {
    if (failure !== undefined) return
    const declared = spec.parts.get(name)
    if (declared === undefined) return fail(unknown(name))
    if (declared.file && declared.orText !== true) {
      return fail(refusal("A file is sent as a form field", [{ path: name, message: "a file part: send it with a filename" }]))
    }
    if (info.valueTruncated) {
      return fail(refusal("A form field is too long", [{ path: name, message: `a form field holds at most ${spec.maxFieldBytes} bytes` }]))
    }
    if (info.mimeType !== "text/plain") {
      return fail(refusal("A form field must be text/plain", [{ path: name, message: `a text field, not ${info.mimeType}` }]))
    }
    // As every string of a JSON body: text no store keeps is refused whatever the field.
    const unstorable = storedTextProblem(value)
    if (unstorable !== undefined) return fail(invalidRequest([{ path: name, message: unstorable }]))
    add(name, value)
  })
  parser.on("file", (name, stream, info) => {
    const declared = spec.parts.get(name)
    if (failure === undefined) {
      if (declared === undefined) fail(unknown(name))
      else if (!declared.file) fail(refusal("A form field is sent as a file", [{ path: name, message: "a text field, not a file" }]))
    }
    // A body cut short fails the file's stream as well as the form; the form's error is the one answered.
    stream.on("error", () => undefined)
    if (failure === undefined && declared?.staged === true && stage !== undefined) {
      stagings.push(stage(stream).then((exit) => {
        if (Exit.isSuccess(exit)) {
          if (failure === undefined) add(name, { filename: info.filename, contentType: info.mimeType, staged: exit.value })
          return
        }
        const error = exit.cause._tag === "Fail" ? exit.cause.error : undefined
        if (error?._tag === "StorageError") storageFailure ??= error
        // Anything else: the body was cut or refused, which the form's own failure reports; a
        // stream that stopped with no such failure is a cut body all the same.
        else fail(malformed("body", "the body ends before the closing boundary"))
        // What was not read of it is drained, so the parser is not left waiting for a reader.
        stream.resume()
      }))
      return
    }
    const chunks: Array<Buffer> = []
    let size = 0
    stream.on("data", (chunk: Buffer) => {
      if (failure !== undefined) return
      chunks.push(chunk)
      size += chunk.length
    })
    stream.on("end", () => {
      if (failure !== undefined) return
      const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)
      add(name, { filename: info.filename, contentType: info.mimeType, bytes })
    })
  })
  parser.on("partsLimit", () => fail(malformed("body", `more than ${spec.maxParts} parts`)))
  const ended = new Promise<void>((resolve) => {
    parser.on("error", (error: Error) => {
      fail(malformed("body", /header/i.test(error.message) ? "a part's headers are malformed" : "the body ends before the closing boundary"))
      resolve()
    })
    parser.on("close", resolve)
  })
  let closed = false
  void ended.then(() => (closed = true))
  /** Settles at busboy's next `drain`, or at its end (a destroyed parser drains no more). */
  const drained = () =>
    new Promise<void>((resolve) => {
      const done = () => {
        parser.off("drain", done)
        parser.off("close", done)
        parser.off("error", done)
        resolve()
      }
      parser.on("drain", done).on("close", done).on("error", done)
    })
  const settled = () => Promise.all(stagings).then(() => undefined)
  return {
    write: (chunk) => {
      if (failure !== undefined || closed) return
      // busboy reads Buffers; a web transport's chunks are plain Uint8Arrays (viewed, not copied).
      const more = parser.write(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength))
      return more ? undefined : drained()
    },
    end: Effect.flatMap(
      Effect.promise(async () => {
        parser.end()
        await ended
        // A part staged while the body was parsed is stored, or has failed, before the form answers.
        await settled()
      }),
      (): Effect.Effect<Form, InvalidRequest | StorageError> =>
        failure !== undefined
          ? Effect.fail(failure)
          : storageFailure !== undefined
          ? Effect.fail(storageFailure)
          : Effect.succeed(form)
    ),
    abort: () => {
      parser.destroy()
      return settled()
    }
  }
}

const MULTIPART = /^multipart\/form-data\s*(?:;|$)/i

/** The request declares a `multipart/form-data` body. */
export const isMultipart = (contentType: string | undefined): boolean => contentType !== undefined && MULTIPART.test(contentType.trim())
