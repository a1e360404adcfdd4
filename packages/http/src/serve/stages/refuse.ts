import { Effect } from "effect"
import { MethodNotAllowed, NotFound } from "../../api/errors.js"
import type { DeclaredError } from "../encode.js"
import type { RequestRecord, Stage } from "../pipeline.js"
import type { EncodeError } from "./recover.js"

export interface RefuseOptions {
  /** The 404's message (a worker names the paths it serves). */
  readonly notFound: (method: string, pathname: string) => string
  /** 405 with `Allow` for a known path asked with another method; a worker answers 404 instead. */
  readonly methodNotAllowed: boolean
}

/** What `locate` found no way to serve: the 413/415 it decided, 404 for an unknown path, 405 with `Allow`. */
export const refuse = <R extends RequestRecord>(encodeError: EncodeError, options: RefuseOptions): Stage<R> => (record, next) => {
  const { match, pathname, refused, request, requestId } = record
  if (refused !== undefined) return encodeError(refused as DeclaredError, requestId)
  if (match._tag === "Found") return next(record)
  if (match._tag === "MethodNotAllowed" && options.methodNotAllowed) {
    const allowed = match.allowed.join(", ")
    const refusal = encodeError(new MethodNotAllowed({ message: `${request.method} is not allowed on ${pathname}; allowed: ${allowed}` }), requestId)
    return Effect.map(refusal, (response) => ({ ...response, headers: { ...response.headers, allow: allowed } }))
  }
  return encodeError(new NotFound({ message: options.notFound(request.method, pathname) }), requestId)
}
