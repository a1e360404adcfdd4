import { PayloadTooLarge, UnsupportedMediaType } from "../api/errors.js"
import { header, type MzkRequest } from "./message.js"
import { isMultipart } from "./multipart.js"

export const MAX_BODY_BYTES = 1024 * 1024

export const tooLarge = () => new PayloadTooLarge({ message: `The request body is over ${MAX_BODY_BYTES} bytes (1 MiB)` })

const hasBody = (request: Pick<MzkRequest, "headers">) => {
  const length = header(request, "content-length")
  return length !== undefined ? Number(length) > 0 : header(request, "transfer-encoding") !== undefined
}

const isJson = (contentType: string | undefined) =>
  contentType !== undefined && /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i.test(contentType.trim())

/**
 * True when the request sends a body that `precheck` lets through (JSON, declared length within
 * 1 MiB or none): a server adapter may read it before dispatching rather than on demand.
 */
export const sendsAcceptableBody = (request: Pick<MzkRequest, "headers">): boolean =>
  hasBody(request) && !(Number(header(request, "content-length") ?? "0") > MAX_BODY_BYTES) &&
  isJson(header(request, "content-type"))

/**
 * `precheck`'s answer for a `multipart/form-data` body it would otherwise refuse: only the route
 * knows whether it takes an upload and up to what size.
 */
export const MULTIPART_BODY = "multipart" as const

/**
 * Errors a request can meet before it is routed: a body declared too large, or not JSON. A
 * multipart body is looked at only where a JSON one would be refused, so JSON requests pay nothing
 * for uploads.
 */
export const precheck = (request: MzkRequest): PayloadTooLarge | UnsupportedMediaType | typeof MULTIPART_BODY | undefined => {
  const length = Number(header(request, "content-length") ?? "0")
  const contentType = header(request, "content-type")
  if (Number.isFinite(length) && length > MAX_BODY_BYTES) return isMultipart(contentType) ? MULTIPART_BODY : tooLarge()
  const sendsBody = hasBody(request) || ["POST", "PUT", "PATCH"].includes(request.method)
  const declaredOther = contentType !== undefined && contentType !== "" && !isJson(contentType)
  if (sendsBody && (declaredOther || (hasBody(request) && !isJson(contentType)))) {
    return isMultipart(contentType) ? MULTIPART_BODY : new UnsupportedMediaType({ message: "Send request bodies as Content-Type: application/json" })
  }
  return undefined
}
