import { HttpApiSchema } from "@effect/platform"
import {
  ERROR_CODES,
  ErrorDetail,
  InsufficientScope,
  InternalError,
  InvalidApiKey,
  InvalidRequest,
  InvalidWebhookUrl,
  KeyLimitReached,
  KeyNotFound,
  MethodNotAllowed,
  NotFound,
  PayloadTooLarge,
  ProofNotFound,
  ProofNotReady,
  RateLimitExceeded,
  ServiceUnavailable,
  StorageError,
  UnsupportedMediaType,
  WebhookLimitReached,
  WebhookNotFound
} from "@mzk/core"
import { Schema } from "effect"

/**
 * Wire forms of the core's tagged errors: `{"error": {"code", "message", "request_id", "details"?}}`
 * with the status of `ERROR_CODES`. Each is a transform to the core class itself, so handlers fail
 * with core errors unchanged, the OpenAPI document shows the envelope, and the typed client decodes
 * the envelope back into the same classes. `request_id` is added by the request middleware, which
 * is the only place that knows it.
 */
type Tag = keyof typeof ERROR_CODES

const envelope = <A extends { readonly _tag: Tag; readonly message: string }>(
  // Each error class has its own constructor props and encoded form; the transform only needs
  // "a schema of A that can also be constructed", which TypeScript cannot say without `any`.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  cls: Schema.Schema<A, any, never> & (new(props: any) => A),
  tag: A["_tag"],
  description: string
) => {
  const { code, status } = ERROR_CODES[tag]
  const Wire = Schema.Struct({
    error: Schema.Struct({
      code: Schema.Literal(code),
      message: Schema.String,
      request_id: Schema.optional(Schema.String),
      details: Schema.optional(Schema.Array(ErrorDetail))
    })
  }).annotations({ identifier: `Error_${code}`, description })
  return Schema.transform(Wire, Schema.typeSchema(cls), {
    strict: false,
    decode: (wire) =>
      new cls(
        tag === "InvalidRequest"
          ? { message: wire.error.message, ...(wire.error.details ? { details: wire.error.details } : {}) }
          : tag === "RateLimitExceeded"
          ? { message: wire.error.message, policy: "key", retry_after_seconds: 0, windows: [] }
          : { message: wire.error.message }
      ),
    encode: (error) => ({
      error: {
        code,
        // Storage failures carry driver text (paths, SQL); clients get a fixed sentence instead.
        message: tag === "StorageError" ? "Storage is temporarily unavailable; retry later" : error.message,
        ...("details" in error && error.details !== undefined ? { details: error.details } : {})
      }
    })
  }).annotations(HttpApiSchema.annotations({ status }))
}

export const InvalidRequestWire = envelope(InvalidRequest, "InvalidRequest", "The request is malformed or fails validation; `details` names each field")
export const InvalidWebhookUrlWire = envelope(InvalidWebhookUrl, "InvalidWebhookUrl", "The webhook URL is not a public HTTPS endpoint")
export const InvalidApiKeyWire = envelope(InvalidApiKey, "InvalidApiKey", "The API key is missing, malformed or revoked")
export const InsufficientScopeWire = envelope(InsufficientScope, "InsufficientScope", "The key lacks the scope this operation needs")
export const KeyNotFoundWire = envelope(KeyNotFound, "KeyNotFound", "No active key with this id in the account")
export const WebhookNotFoundWire = envelope(WebhookNotFound, "WebhookNotFound", "No webhook with this id in the account")
export const ProofNotFoundWire = envelope(ProofNotFound, "ProofNotFound", "No proof with this id in the account")
export const NotFoundWire = envelope(NotFound, "NotFound", "No such route")
export const MethodNotAllowedWire = envelope(MethodNotAllowed, "MethodNotAllowed", "The route exists but not for this method")
export const KeyLimitReachedWire = envelope(KeyLimitReached, "KeyLimitReached", "The account already has 10 active keys")
export const WebhookLimitReachedWire = envelope(WebhookLimitReached, "WebhookLimitReached", "The account already has 20 webhooks")
export const ProofNotReadyWire = envelope(ProofNotReady, "ProofNotReady", "The proof is not completed")
export const PayloadTooLargeWire = envelope(PayloadTooLarge, "PayloadTooLarge", "The request body is over 1 MiB")
export const UnsupportedMediaTypeWire = envelope(UnsupportedMediaType, "UnsupportedMediaType", "The request body is not application/json")
export const RateLimitExceededWire = envelope(RateLimitExceeded, "RateLimitExceeded", "A rate limit was hit; see Retry-After and RateLimit")
export const InternalErrorWire = envelope(InternalError, "InternalError", "An unexpected error; nothing internal is disclosed")
export const ServiceUnavailableWire = envelope(ServiceUnavailable, "ServiceUnavailable", "Temporarily unavailable; retry later")
export const StorageErrorWire = envelope(StorageError, "StorageError", "Storage is temporarily unavailable; retry later")
