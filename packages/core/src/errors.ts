import { Schema } from "effect"

/**
 * Every error the API can answer with, as tagged errors. `ERROR_CODES` gives each its wire code
 * and HTTP status, so the HTTP layer and embedders map them from one table.
 */
export const ErrorDetail = Schema.Struct({ path: Schema.String, message: Schema.String })
export type ErrorDetail = typeof ErrorDetail.Type

const message = { message: Schema.String }

export class InvalidRequest extends Schema.TaggedError<InvalidRequest>()("InvalidRequest", {
  message: Schema.String,
  details: Schema.optionalWith(Schema.Array(ErrorDetail), { exact: true })
}) {}
export class InvalidApiKey extends Schema.TaggedError<InvalidApiKey>()("InvalidApiKey", message) {}
export class InsufficientScope extends Schema.TaggedError<InsufficientScope>()("InsufficientScope", message) {}
export class KeyNotFound extends Schema.TaggedError<KeyNotFound>()("KeyNotFound", message) {}
export class KeyLimitReached extends Schema.TaggedError<KeyLimitReached>()("KeyLimitReached", message) {}
export class InvalidWebhookUrl extends Schema.TaggedError<InvalidWebhookUrl>()("InvalidWebhookUrl", message) {}
export class WebhookNotFound extends Schema.TaggedError<WebhookNotFound>()("WebhookNotFound", message) {}
export class WebhookLimitReached extends Schema.TaggedError<WebhookLimitReached>()("WebhookLimitReached", message) {}
export class ProofNotFound extends Schema.TaggedError<ProofNotFound>()("ProofNotFound", message) {}
export class ProofNotReady extends Schema.TaggedError<ProofNotReady>()("ProofNotReady", message) {}
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", message) {}
export class MethodNotAllowed extends Schema.TaggedError<MethodNotAllowed>()("MethodNotAllowed", message) {}
export class PayloadTooLarge extends Schema.TaggedError<PayloadTooLarge>()("PayloadTooLarge", message) {}
export class UnsupportedMediaType extends Schema.TaggedError<UnsupportedMediaType>()("UnsupportedMediaType", message) {}
export class InternalError extends Schema.TaggedError<InternalError>()("InternalError", message) {}
export class ServiceUnavailable extends Schema.TaggedError<ServiceUnavailable>()("ServiceUnavailable", message) {}

/** One rate-limit policy as seen by one request: the numbers behind the RateLimit headers. */
export const RateLimitWindow = Schema.Struct({
  policy: Schema.Literal("key", "daily"),
  limit: Schema.Int,
  remaining: Schema.Int,
  window_seconds: Schema.Int,
  reset_seconds: Schema.Int
})
export type RateLimitWindow = typeof RateLimitWindow.Type

export class RateLimitExceeded extends Schema.TaggedError<RateLimitExceeded>()("RateLimitExceeded", {
  message: Schema.String,
  policy: Schema.Literal("key", "daily"),
  retry_after_seconds: Schema.Int,
  windows: Schema.Array(RateLimitWindow)
}) {}

/**
 * Storage could not do its work (connection lost, database busy past its timeout). Never carries
 * query text or parameters to the client: the cause stays server-side.
 */
export class StorageError extends Schema.TaggedError<StorageError>()("StorageError", {
  message: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {}

export const ERROR_CODES = {
  InvalidRequest: { code: "invalid_request", status: 400 },
  InvalidWebhookUrl: { code: "invalid_webhook_url", status: 400 },
  InvalidApiKey: { code: "invalid_api_key", status: 401 },
  InsufficientScope: { code: "insufficient_scope", status: 403 },
  KeyNotFound: { code: "key_not_found", status: 404 },
  WebhookNotFound: { code: "webhook_not_found", status: 404 },
  ProofNotFound: { code: "proof_not_found", status: 404 },
  NotFound: { code: "not_found", status: 404 },
  MethodNotAllowed: { code: "method_not_allowed", status: 405 },
  KeyLimitReached: { code: "key_limit_reached", status: 409 },
  WebhookLimitReached: { code: "webhook_limit_reached", status: 409 },
  ProofNotReady: { code: "proof_not_ready", status: 409 },
  PayloadTooLarge: { code: "payload_too_large", status: 413 },
  UnsupportedMediaType: { code: "unsupported_media_type", status: 415 },
  RateLimitExceeded: { code: "rate_limit_exceeded", status: 429 },
  InternalError: { code: "internal_error", status: 500 },
  ServiceUnavailable: { code: "service_unavailable", status: 503 },
  StorageError: { code: "service_unavailable", status: 503 }
} as const satisfies Record<string, { code: string; status: number }>

export type ApiError =
  | InvalidRequest
  | InvalidWebhookUrl
  | InvalidApiKey
  | InsufficientScope
  | KeyNotFound
  | WebhookNotFound
  | ProofNotFound
  | NotFound
  | MethodNotAllowed
  | KeyLimitReached
  | WebhookLimitReached
  | ProofNotReady
  | PayloadTooLarge
  | UnsupportedMediaType
  | RateLimitExceeded
  | InternalError
  | ServiceUnavailable
  | StorageError
