/**
 * The events mzk delivers, as plain TypeScript types. Written by hand so this package needs no
 * Effect and no `@mzk/core`; `test/events.types.test.ts` holds them equal to the core's schemas
 * (type-checked) and to the served OpenAPI `webhooks` section (run), so they cannot drift.
 */

export const EVENT_TYPES = [
  "proof.completed",
  "proof.failed",
  "proof.expired",
  "proof.verified",
  "proof.canceled",
  "key.created",
  "key.revoked",
  "key.rolled",
  "circuit.ready",
  "circuit.failed",
  "webhook.test"
] as const
export type EventType = (typeof EVENT_TYPES)[number]

/** ISO 8601 UTC with milliseconds, e.g. `2026-11-22T10:00:00.000Z`. */
export type Timestamp = string

/** Public signal names → decimal strings (field elements do not fit a JSON number). */
export type PublicInputs = { readonly [signal: string]: string }

export type ProofErrorCode = "constraint_violation" | "invalid_inputs" | "timeout" | "verification_failed" | "internal"

export interface ProofError {
  readonly code: ProofErrorCode
  readonly message: string
}

export interface ProofCompletedData {
  readonly proof_id: string
  readonly circuit: string
  readonly status: "completed"
  /** base64 of the snarkjs proof JSON. */
  readonly proof_blob: string
  readonly public_inputs: PublicInputs
  readonly duration_ms: number
  readonly created_at: Timestamp
}

export interface ProofFailedData {
  readonly proof_id: string
  readonly circuit: string
  readonly status: "failed"
  readonly error: ProofError
  readonly public_inputs: PublicInputs
  readonly duration_ms: number
  readonly created_at: Timestamp
}

export interface ProofExpiredData {
  readonly proof_id: string
  readonly circuit: string
  readonly status: "expired"
  readonly created_at: Timestamp
  readonly expired_at: Timestamp
}

export interface ProofVerifiedData {
  readonly proof_id: string
  readonly circuit: string
  readonly valid: boolean
  readonly verified_at: Timestamp
}

/** A queued or running proof was canceled by the account; it produced no proof. */
export interface ProofCanceledData {
  readonly proof_id: string
  readonly circuit: string
  readonly status: "canceled"
  readonly canceled_at: Timestamp
  readonly created_at: Timestamp
}

export type Scope =
  | "keys:read"
  | "keys:write"
  | "webhooks:read"
  | "webhooks:write"
  | "proofs:read"
  | "proofs:write"
  | "circuits:read"
  | "circuits:write"
  | "events:read"
  | "audit:read"

/** Never the raw key. */
export interface KeyCreatedData {
  readonly id: string
  readonly name: string
  readonly description: string | null
  readonly scopes: ReadonlyArray<Scope>
  readonly created_at: Timestamp
}

export interface KeyRevokedData {
  readonly id: string
  readonly name: string
  readonly revoked_at: Timestamp
}

/** A key was rolled: the new key (never its raw value), and when the old one stops working. */
export interface KeyRolledData {
  readonly id: string
  readonly name: string
  readonly scopes: ReadonlyArray<Scope>
  readonly created_at: Timestamp
  readonly previous_key_id: string
  readonly previous_key_expires_at: Timestamp
}

export interface CircuitReadyData {
  readonly name: string
  readonly status: "ready"
  readonly constraints: number
  readonly development_only: boolean
  readonly created_at: Timestamp
}

export type CircuitErrorCode =
  | "compile_error"
  | "include_outside_upload"
  | "circuit_too_large"
  | "compile_timeout"
  | "compile_memory_exceeded"
  | "invalid_artifacts"
  | "artifact_mismatch"
  | "sample_inputs_required"
  | "internal"

export interface CircuitError {
  readonly code: CircuitErrorCode
  readonly message: string
  /** Where the compiler named them: the file of the upload and the line of the error. */
  readonly file?: string
  readonly line?: number
}

export interface CircuitFailedData {
  readonly name: string
  readonly status: "failed"
  readonly error: CircuitError
  readonly created_at: Timestamp
}

/** Sent by `POST /api/v1/webhooks/{id}/test` to that webhook only: answer it as any event, with a 2xx. */
export interface WebhookTestData {
  /** The webhook tested (`wh_…`), for a receiver several webhooks share. */
  readonly webhook_id: string
  readonly message: string
}

export interface EventDataByType {
  readonly "proof.completed": ProofCompletedData
  readonly "proof.failed": ProofFailedData
  readonly "proof.expired": ProofExpiredData
  readonly "proof.verified": ProofVerifiedData
  readonly "proof.canceled": ProofCanceledData
  readonly "key.created": KeyCreatedData
  readonly "key.revoked": KeyRevokedData
  readonly "key.rolled": KeyRolledData
  readonly "circuit.ready": CircuitReadyData
  readonly "circuit.failed": CircuitFailedData
  readonly "webhook.test": WebhookTestData
}

/** One delivered event of type `T`. */
export interface MzkEventOf<T extends EventType> {
  /** `evt_…`, the same on every retry of the event: deduplicate on it. */
  readonly id: string
  readonly type: T
  readonly created_at: Timestamp
  readonly data: EventDataByType[T]
}

/** Any delivered event: switch on `type` and `data` narrows with it. */
export type MzkEvent = { [T in EventType]: MzkEventOf<T> }[EventType]

export const isEventType = (value: unknown): value is EventType =>
  typeof value === "string" && (EVENT_TYPES as ReadonlyArray<string>).includes(value)
