import { HttpApiSchema } from "@effect/platform"
import {
  BatchNotFound,
  CircuitInUse,
  CircuitLimitReached,
  CircuitNameTaken,
  CircuitNotFound,
  CircuitNotReady,
  CompilationLimitReached,
  DeliveryNotFound,
  DeliveryPending,
  ErrorDetail,
  EventNotFound,
  IdempotencyKeyInUse,
  IdempotencyKeyReused,
  InsufficientScope,
  InternalError,
  InvalidApiKey,
  InvalidRequest,
  InvalidWebhookUrl,
  KeyAlreadyRolled,
  KeyLimitReached,
  KeyNotFound,
  ProofNotCancelable,
  ProofNotFound,
  ProofNotReady,
  RateLimitExceeded,
  RecoveryNotFound,
  SecretRotationInProgress,
  SetupUnavailable,
  StorageError,
  VerificationKeyNotFound,
  WebhookInactive,
  VerificationKeyLimitReached,
  WebhookLimitReached,
  WebhookNotFound
} from "@mzk/core"
import { Option, Schema, SchemaAST as AST } from "effect"

const message = { message: Schema.String }

/** No route has this path. */
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", message) {}
/** A route has this path, but not for this method. */
export class MethodNotAllowed extends Schema.TaggedError<MethodNotAllowed>()("MethodNotAllowed", message) {}
export class PayloadTooLarge extends Schema.TaggedError<PayloadTooLarge>()("PayloadTooLarge", message) {}
/** An upload over its endpoint's limit (a setting), unlike `PayloadTooLarge`, the 1 MiB of every JSON body. */
export class UploadTooLarge extends Schema.TaggedError<UploadTooLarge>()("UploadTooLarge", message) {}
export class UnsupportedMediaType extends Schema.TaggedError<UnsupportedMediaType>()("UnsupportedMediaType", message) {}
/** A `Range` that starts past the end of the file asked for. */
export class RangeNotSatisfiable extends Schema.TaggedError<RangeNotSatisfiable>()("RangeNotSatisfiable", message) {}
/** The server is stopping; the request was not served. */
export class ServiceUnavailable extends Schema.TaggedError<ServiceUnavailable>()("ServiceUnavailable", message) {}

/** What a wire error schema carries for the server: its class's `_tag`, code, status and envelope. */
export interface WireError {
  readonly tag: string
  readonly code: string
  readonly status: number
  /** The body of its answer, without the request id (added where the answer is made). */
  readonly envelope: (error: Carried) => { readonly error: Record<string, unknown> }
}

const WireErrorAnnotation: unique symbol = Symbol.for("@mzk/http/WireError")

/** The wire error `ast` is, if it is one of this module's schemas. */
export const wireErrorOf = (ast: AST.AST): WireError | undefined => Option.getOrUndefined(AST.getAnnotation<WireError>(ast, WireErrorAnnotation))

/** What the storage error says to clients: its own text names paths and SQL, which stay server-side. */
const STORAGE_ERROR_MESSAGE = "Storage is temporarily unavailable; retry later"

interface Carried {
  readonly _tag: string
  readonly message: string
  readonly details?: ReadonlyArray<ErrorDetail> | undefined
}

/**
 * The wire form of an error class: `{"error": {"code", "message", "request_id", "details"?}}`
 * with its HTTP status. Each is a transform to the class itself, so handlers fail with core errors
 * unchanged, the OpenAPI document shows the envelope and the typed client decodes the envelope
 * back into the same classes; the server answers with the same `envelope` function, read from the
 * schema once (`serve/encode.ts`), without running Schema per error. `request_id` is added when a
 * response is made, the only place that knows it. `publicMessage` replaces the error's own text.
 */
const wire = <A extends Carried>(
  // Each error class has its own constructor props; the transform only needs "a schema of A that
  // can also be constructed", which TypeScript cannot say without `any`.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  cls: Schema.Schema<A, any, never> & (new(props: any) => A) & { readonly _tag: A["_tag"] },
  code: string,
  status: number,
  description: string,
  options: {
    readonly fromWire?: (error: { readonly message: string; readonly details?: ReadonlyArray<ErrorDetail> | undefined }) => object
    readonly publicMessage?: string
  } = {}
) => {
  const Envelope = Schema.Struct({
    error: Schema.Struct({
      code: Schema.Literal(code),
      message: Schema.String,
      request_id: Schema.optional(Schema.String),
      details: Schema.optional(Schema.Array(ErrorDetail))
    })
  }).annotations({ identifier: `Error_${code}`, description })
  const envelope = (error: Carried) => ({
    error: {
      code,
      message: options.publicMessage ?? error.message,
      ...(error.details === undefined ? {} : { details: error.details })
    }
  })
  const carried: WireError = { tag: cls._tag, code, status, envelope }
  return Schema.transform(Envelope, Schema.typeSchema(cls), {
    strict: false,
    decode: (wire) => new cls(options.fromWire?.(wire.error) ?? { message: wire.error.message }),
    encode: envelope
  }).annotations({ ...HttpApiSchema.annotations({ status }), [WireErrorAnnotation]: carried })
}

export const InvalidRequestWire = wire(
  InvalidRequest,
  "invalid_request",
  400,
  "The request is malformed or fails validation (a string anywhere in a body, keys included, holding a NUL or a " +
    "lone surrogate, which no store keeps, among them); `details` names each field",
  { fromWire: (e) => ({ message: e.message, ...(e.details === undefined ? {} : { details: e.details }) }) }
)
export const InvalidWebhookUrlWire = wire(InvalidWebhookUrl, "invalid_webhook_url", 400, "The webhook URL is not a public HTTPS endpoint")
export const InvalidApiKeyWire = wire(InvalidApiKey, "invalid_api_key", 401, "The API key is missing, malformed, revoked or expired")
export const InsufficientScopeWire = wire(InsufficientScope, "insufficient_scope", 403, "The key lacks the scope this operation needs")
export const KeyNotFoundWire = wire(KeyNotFound, "key_not_found", 404, "No active key with this id in the account")
export const WebhookNotFoundWire = wire(WebhookNotFound, "webhook_not_found", 404, "No webhook with this id in the account")
export const ProofNotFoundWire = wire(ProofNotFound, "proof_not_found", 404, "No proof with this id in the account")
export const VerificationKeyNotFoundWire = wire(
  VerificationKeyNotFound,
  "verification_key_not_found",
  404,
  "No registered verification key with this id in the account"
)
export const EventNotFoundWire = wire(EventNotFound, "event_not_found", 404, "No event with this id in the account (events are kept for the retention window, 30 days by default)")
export const DeliveryNotFoundWire = wire(DeliveryNotFound, "delivery_not_found", 404, "No delivery with this id of this webhook")
export const RecoveryNotFoundWire = wire(RecoveryNotFound, "recovery_not_found", 404, "No recovery with this id of this webhook")
export const BatchNotFoundWire = wire(BatchNotFound, "batch_not_found", 404, "No batch with this id in the account")
export const NotFoundWire = wire(NotFound, "not_found", 404, "No such route, or no such named resource")
export const MethodNotAllowedWire = wire(MethodNotAllowed, "method_not_allowed", 405, "The path exists but not for this method; see Allow")
export const KeyLimitReachedWire = wire(KeyLimitReached, "key_limit_reached", 409, "The account already has 10 active keys")
export const KeyAlreadyRolledWire = wire(
  KeyAlreadyRolled,
  "key_already_rolled",
  409,
  "The key was rolled already and still works until its overlap ends; roll the key that replaced it (named in the message), or revoke this one"
)
export const WebhookLimitReachedWire = wire(WebhookLimitReached, "webhook_limit_reached", 409, "The account already has 20 webhooks")
export const VerificationKeyLimitReachedWire = wire(
  VerificationKeyLimitReached,
  "verification_key_limit_reached",
  409,
  "The account already holds 50 registered verification keys; delete one to register another"
)
export const SecretRotationInProgressWire = wire(
  SecretRotationInProgress,
  "secret_rotation_in_progress",
  409,
  "The secret an earlier rotation replaced still signs deliveries; send force: true to end that overlap now"
)
export const ProofNotReadyWire = wire(ProofNotReady, "proof_not_ready", 409, "The proof is not completed")
export const WebhookInactiveWire = wire(
  WebhookInactive,
  "webhook_inactive",
  409,
  "The webhook is inactive (switched off, or disabled after its deliveries failed): re-enable it with PATCH {\"active\": true} first"
)
export const DeliveryPendingWire = wire(DeliveryPending, "delivery_pending", 409, "The delivery is already waiting for an attempt: its next one comes by itself")
export const ProofNotCancelableWire = wire(
  ProofNotCancelable,
  "proof_not_cancelable",
  409,
  "The proof has settled (completed, failed, canceled or expired); only queued or running proofs can be canceled"
)
export const CircuitNotFoundWire = wire(CircuitNotFound, "circuit_not_found", 404, "No circuit of this name among the built-in ones and the account's")
export const CircuitNameTakenWire = wire(
  CircuitNameTaken,
  "circuit_name_taken",
  409,
  "A built-in circuit has this name (an account's own name is not refused: an upload of it is its next version)"
)
export const CircuitLimitReachedWire = wire(CircuitLimitReached, "circuit_limit_reached", 409, "The account already has as many circuits as it may hold")
export const CompilationLimitReachedWire = wire(
  CompilationLimitReached,
  "compilation_limit_reached",
  409,
  "The account already has as many circuits compiling as it may at once"
)
export const CircuitInUseWire = wire(
  CircuitInUse,
  "circuit_in_use",
  409,
  "The circuit has queued or running proofs, or is built in; built-in circuits cannot be removed"
)
export const SetupUnavailableWire = wire(
  SetupUnavailable,
  "setup_unavailable",
  409,
  "This server has no trusted setup (powers of tau) for circom sources, so it stored nothing; its operator must give it one " +
    "(the message says how), or upload prebuilt artifacts (wasm, zkey, sym), which need none"
)
export const CircuitNotReadyWire = wire(CircuitNotReady, "circuit_not_ready", 409, "The circuit is still compiling, or failed to build")
export const IdempotencyKeyReusedWire = wire(
  IdempotencyKeyReused,
  "idempotency_key_reused",
  422,
  "The Idempotency-Key was used in the last 24 hours with a different request (method, path or body)"
)
export const IdempotencyKeyInUseWire = wire(
  IdempotencyKeyInUse,
  "idempotency_key_in_use",
  409,
  "The first request with this Idempotency-Key is still in progress; retry once it has finished"
)
export const PayloadTooLargeWire = wire(PayloadTooLarge, "payload_too_large", 413, "The request body is over 1 MiB")
export const UploadTooLargeWire = wire(UploadTooLarge, "upload_too_large", 413, "The upload is over this server's upload limit (a setting; 50 MiB by default)")
export const UnsupportedMediaTypeWire = wire(UnsupportedMediaType, "unsupported_media_type", 415, "The request body is not of the type the endpoint takes: application/json, or multipart/form-data for uploads")
export const RangeNotSatisfiableWire = wire(
  RangeNotSatisfiable,
  "range_not_satisfiable",
  416,
  "The Range starts past the end of the file; `Content-Range: bytes */<size>` gives its size"
)
export const RateLimitExceededWire = wire(
  RateLimitExceeded,
  "rate_limit_exceeded",
  429,
  "A rate limit was hit; see Retry-After and RateLimit",
  // The windows travel in the RateLimit headers, not in the body.
  { fromWire: (e) => ({ message: e.message, policy: "key", retry_after_seconds: 0, windows: [] }) }
)
export const InternalErrorWire = wire(InternalError, "internal_error", 500, "An unexpected error; nothing internal is disclosed")
export const ServiceUnavailableWire = wire(ServiceUnavailable, "service_unavailable", 503, "Temporarily unavailable; retry later")
export const StorageErrorWire = wire(StorageError, "service_unavailable", 503, STORAGE_ERROR_MESSAGE, {
  publicMessage: STORAGE_ERROR_MESSAGE
})
