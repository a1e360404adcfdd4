import { Schema } from "effect"

/**
 * The domain's errors, as tagged errors: what a service call can fail with. Their wire codes and
 * HTTP statuses are the HTTP layer's business (`@mzk/http`'s error schemas), not the core's.
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
/** A roll of a key that an earlier roll replaced and that still works (its overlap): roll its successor instead. */
export class KeyAlreadyRolled extends Schema.TaggedError<KeyAlreadyRolled>()("KeyAlreadyRolled", message) {}
export class InvalidWebhookUrl extends Schema.TaggedError<InvalidWebhookUrl>()("InvalidWebhookUrl", message) {}
export class WebhookNotFound extends Schema.TaggedError<WebhookNotFound>()("WebhookNotFound", message) {}
export class WebhookLimitReached extends Schema.TaggedError<WebhookLimitReached>()("WebhookLimitReached", message) {}
/** A test, a retry or a recovery asked of a webhook that is switched off: it receives nothing until re-enabled. */
export class WebhookInactive extends Schema.TaggedError<WebhookInactive>()("WebhookInactive", message) {}
export class DeliveryNotFound extends Schema.TaggedError<DeliveryNotFound>()("DeliveryNotFound", message) {}
/** A retry of a delivery that is already waiting for an attempt. */
export class DeliveryPending extends Schema.TaggedError<DeliveryPending>()("DeliveryPending", message) {}
/** An account holds as many registered verification keys as it may; delete one to register another. */
export class VerificationKeyLimitReached extends Schema.TaggedError<VerificationKeyLimitReached>()("VerificationKeyLimitReached", message) {}
export class VerificationKeyNotFound extends Schema.TaggedError<VerificationKeyNotFound>()("VerificationKeyNotFound", message) {}
export class RecoveryNotFound extends Schema.TaggedError<RecoveryNotFound>()("RecoveryNotFound", message) {}
export class EventNotFound extends Schema.TaggedError<EventNotFound>()("EventNotFound", message) {}
/** A secret rotation while the secret an earlier one replaced still signs, without `force`. */
export class SecretRotationInProgress extends Schema.TaggedError<SecretRotationInProgress>()("SecretRotationInProgress", message) {}
export class ProofNotFound extends Schema.TaggedError<ProofNotFound>()("ProofNotFound", message) {}
export class ProofNotReady extends Schema.TaggedError<ProofNotReady>()("ProofNotReady", message) {}
/** A cancel of a proof that has already settled (completed, failed, canceled or expired). */
export class ProofNotCancelable extends Schema.TaggedError<ProofNotCancelable>()("ProofNotCancelable", message) {}
/** No batch with this id has proofs in the account. */
export class BatchNotFound extends Schema.TaggedError<BatchNotFound>()("BatchNotFound", message) {}
export class CircuitNotFound extends Schema.TaggedError<CircuitNotFound>()("CircuitNotFound", message) {}
export class CircuitNameTaken extends Schema.TaggedError<CircuitNameTaken>()("CircuitNameTaken", message) {}
export class CircuitLimitReached extends Schema.TaggedError<CircuitLimitReached>()("CircuitLimitReached", message) {}
export class CompilationLimitReached extends Schema.TaggedError<CompilationLimitReached>()("CompilationLimitReached", message) {}
/** Circom sources uploaded to a server that has no trusted setup to give them (no powers of tau). */
export class SetupUnavailable extends Schema.TaggedError<SetupUnavailable>()("SetupUnavailable", message) {}
/** Removal refused: proofs of the circuit are queued or running, or it is built in. */
export class CircuitInUse extends Schema.TaggedError<CircuitInUse>()("CircuitInUse", message) {}
/** A proof of a circuit that is still compiling, or failed to build. */
export class CircuitNotReady extends Schema.TaggedError<CircuitNotReady>()("CircuitNotReady", message) {}
/** The `Idempotency-Key` was used for another request (method, path or body) within its 24 hours. */
export class IdempotencyKeyReused extends Schema.TaggedError<IdempotencyKeyReused>()("IdempotencyKeyReused", message) {}
/** The first request with this `Idempotency-Key` has not finished yet. */
export class IdempotencyKeyInUse extends Schema.TaggedError<IdempotencyKeyInUse>()("IdempotencyKeyInUse", message) {}
export class InternalError extends Schema.TaggedError<InternalError>()("InternalError", message) {}

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
