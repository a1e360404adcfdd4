import { type ErrorDetail, InvalidRequest } from "@mzk/core"
import * as Multipasta from "multipasta"

/** One file part of a `multipart/form-data` body, whole in memory (the route's body limit bounds it). */
export interface FormFile {
  /** The part's `filename` (`filename*` decoded), as the client sent it; checking it is the endpoint's business. */
  readonly filename: string | undefined
  /** Lower case, without parameters; `application/octet-stream` where a file part declares none (RFC 7578 §4.4). */
  readonly contentType: string
  readonly bytes: Uint8Array
}

/** What the form of an endpoint takes, by part name: a text field or a file, once or repeated. */
export interface FormPartSpec {
  readonly file: boolean
  readonly repeated: boolean
}

export interface FormSpec {
  readonly parts: ReadonlyMap<string, FormPartSpec>
  readonly maxParts: number
  readonly maxFieldBytes: number
}

/** A parsed form: each part by name, a repeated part as an array, in the shape the endpoint's schema decodes. */
export type Form = Record<string, string | FormFile | Array<string | FormFile>>

export interface FormParser {
  /** Feeds the next chunk of the body; after a failure the rest is ignored (it is still read, within the limit). */
  readonly write: (chunk: Uint8Array) => void
  /** The form once the body has ended, or why it is refused, naming the part. */
  readonly end: () => Form | InvalidRequest
}

const refusal = (message: string, details: ReadonlyArray<ErrorDetail>) => new InvalidRequest({ message, details })

const BAD_BODY = "The multipart/form-data body is malformed"

const multipastaFailure = (error: Multipasta.MultipartError, spec: FormSpec, part: string | undefined): InvalidRequest => {
  switch (error._tag) {
    case "InvalidBoundary":
      return refusal(BAD_BODY, [{ path: "body", message: "Content-Type multipart/form-data needs a boundary parameter" }])
    case "BadHeaders":
      return refusal(BAD_BODY, [{ path: part ?? "body", message: "a part's headers are malformed" }])
    case "InvalidDisposition":
      return refusal(BAD_BODY, [{ path: "body", message: "every part needs Content-Disposition: form-data; name=\"…\"" }])
    case "EndNotReached":
      return refusal(BAD_BODY, [{ path: "body", message: "the body ends before the closing boundary" }])
    case "ReachedLimit":
      return error.limit === "MaxParts"
        ? refusal(BAD_BODY, [{ path: "body", message: `more than ${spec.maxParts} parts` }])
        : refusal("A form field is too long", [{ path: part ?? "body", message: `a form field holds at most ${spec.maxFieldBytes} bytes` }])
  }
}

const UTF8 = new TextDecoder("utf-8", { fatal: true })

/**
 * A streaming `multipart/form-data` parser (multipasta, the parser @effect/platform uses) for one
 * endpoint's form: file parts are kept as bytes, text fields as strings, and anything the form
 * does not declare is refused with the part's name in `details` rather than silently dropped, as
 * JSON bodies refuse excess properties. Chunks are fed as the transport reads them, so a body is
 * never held twice (raw and parsed).
 */
export const makeFormParser = (contentType: string, spec: FormSpec): FormParser => {
  const form: Form = {}
  let failure: InvalidRequest | undefined
  let current: string | undefined
  let done = false
  const fail = (error: InvalidRequest) => {
    failure ??= error
  }
  const add = (name: string, value: string | FormFile) => {
    const declared = spec.parts.get(name)!
    const seen = form[name]
    if (!declared.repeated) {
      if (seen !== undefined) fail(refusal("A form part is sent more than once", [{ path: name, message: "send this part once" }]))
      form[name] = value
    } else if (seen === undefined) form[name] = [value]
    else (seen as Array<string | FormFile>).push(value)
  }
  const parser = Multipasta.make({
    headers: { "content-type": contentType },
    maxParts: spec.maxParts,
    maxFieldSize: spec.maxFieldBytes,
    // Declared file parts are files even without a filename (curl's `-F wasm=<file`); undeclared
    // parts go through the file path too, so their bytes are dropped instead of collected.
    isFile: (info) => info.filename !== undefined || spec.parts.get(info.name)?.file !== false,
    onField: (info, value) => {
      current = info.name
      if (failure !== undefined) return
      if (info.contentType !== "text/plain") {
        return fail(refusal("A form field must be text/plain", [{ path: info.name, message: `a text field, not ${info.contentType}` }]))
      }
      const charset = info.contentTypeParameters.charset?.toLowerCase()
      if (charset !== undefined && charset !== "utf-8" && charset !== "us-ascii") {
        return fail(refusal("A form field must be UTF-8", [{ path: info.name, message: `charset ${charset} is not supported; send UTF-8` }]))
      }
      let text: string
      try {
        text = UTF8.decode(value)
      } catch {
        return fail(refusal("A form field must be UTF-8", [{ path: info.name, message: "not valid UTF-8" }]))
      }
      add(info.name, text)
    },
    onFile: (info) => {
      current = info.name
      const declared = spec.parts.get(info.name)
      if (failure === undefined) {
        if (declared === undefined) {
          const known = [...spec.parts.keys()].join(", ")
          fail(refusal("The form has a part it does not take", [{ path: info.name || "body", message: `unknown part; the form takes ${known}` }]))
        } else if (!declared.file) {
          fail(refusal("A form field is sent as a file", [{ path: info.name, message: "a text field, not a file" }]))
        }
      }
      if (failure !== undefined) return () => undefined
      const chunks: Array<Uint8Array> = []
      let size = 0
      return (chunk) => {
        if (chunk !== null) {
          // Views of the transport's chunks, which it hands over for good (see MzkRequest.stream).
          chunks.push(chunk)
          size += chunk.length
          return
        }
        if (failure !== undefined) return
        const bytes = chunks.length === 1 ? chunks[0]! : new Uint8Array(size)
        if (chunks.length !== 1) {
          let at = 0
          for (const piece of chunks) {
            bytes.set(piece, at)
            at += piece.length
          }
        }
        add(info.name, { filename: info.filename, contentType: info.contentType, bytes })
      }
    },
    onError: (error) => fail(multipastaFailure(error, spec, current)),
    onDone: () => {
      done = true
    }
  })
  const guarded = (step: () => void) => {
    try {
      step()
    } catch {
      // A malformed `filename*` (bad percent-encoding) throws from inside the parser.
      fail(refusal(BAD_BODY, [{ path: current ?? "body", message: "a part's headers are malformed" }]))
    }
  }
  return {
    write: (chunk) => {
      if (failure === undefined) guarded(() => parser.write(chunk))
    },
    end: () => {
      if (failure === undefined) guarded(() => parser.end())
      if (failure !== undefined) return failure
      if (!done) return multipastaFailure({ _tag: "EndNotReached" }, spec, undefined)
      return form
    }
  }
}

const MULTIPART = /^multipart\/form-data\s*(?:;|$)/i

/** The request declares a `multipart/form-data` body. */
export const isMultipart = (contentType: string | undefined): boolean => contentType !== undefined && MULTIPART.test(contentType.trim())
