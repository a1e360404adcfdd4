/**
 * The API's request and response bodies as plain TypeScript types. Written by hand so this
 * package needs no Effect and no `@mzk/core`; `test/types.test.ts` holds them equal to the
 * server's schemas (checked by the compiler), so they cannot drift.
 */

/** ISO 8601 UTC with milliseconds, e.g. `2026-11-22T10:00:00.000Z`. */
export type Timestamp = string

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

export type EventType =
  | "proof.completed"
  | "proof.failed"
  | "proof.expired"
  | "proof.verified"
  | "proof.canceled"
  | "key.created"
  | "key.revoked"
  | "key.rolled"
  | "circuit.ready"
  | "circuit.failed"
  | "webhook.test"

/** What a webhook's `events` may name: every type but `webhook.test`, which goes only to the webhook tested. */
export type SubscribableEventType = Exclude<EventType, "webhook.test">

/** A list's page: `limit` 1–100 (default 20), and the id of the last item of the previous page. */
export interface PageQuery {
  readonly limit?: number
  readonly starting_after?: string
}

// ---- API keys

export interface CreateKeyInput {
  /** 1–64 letters, digits and hyphens. */
  readonly name: string
  readonly description?: string | null
  /** Default: every scope. */
  readonly scopes?: ReadonlyArray<Scope>
  /** When the key stops working (ISO 8601 UTC, in the future); absent or null: never. */
  readonly expires_at?: Timestamp | null
}

export interface RollKeyInput {
  /** Seconds the old key keeps working, 0 to 2592000 (30 days); default 86400 (24 h). */
  readonly expires_in?: number
  /**
   * When the new key stops working (ISO 8601 UTC, in the future); null: never. Absent: the old
   * key's own `expires_at` (a roll replaces a key's secret, not its term).
   */
  readonly expires_at?: Timestamp | null
}

export interface ApiKey {
  readonly id: string
  readonly name: string
  readonly description: string | null
  /** The first characters of the key, for recognising it. */
  readonly prefix: string
  readonly scopes: ReadonlyArray<Scope>
  readonly created_at: Timestamp
  readonly last_used_at: Timestamp | null
  /** When the key stops working (set at creation, or the end of a roll's overlap); null: never. */
  readonly expires_at: Timestamp | null
}

export interface CreatedApiKey extends ApiKey {
  /**
   * The raw key (`mzk_…`): in this response only, never again. Null when the response is the
   * replay of an earlier call with the same `idempotencyKey`: mzk never stores raw keys.
   */
  readonly key: string | null
}

export interface ApiKeyList {
  readonly keys: ReadonlyArray<ApiKey>
  readonly total: number
  /** Active keys an account may hold. */
  readonly limit: number
}

// ---- Webhooks

export interface CreateWebhookInput {
  /** A public HTTPS endpoint. */
  readonly url: string
  readonly events: ReadonlyArray<SubscribableEventType>
  readonly description?: string | null
  /** Default true. */
  readonly active?: boolean
}

/** Absent fields stay as they are; `active: true` re-enables a webhook disabled after failures. */
export interface UpdateWebhookInput {
  readonly url?: string
  readonly events?: ReadonlyArray<SubscribableEventType>
  readonly description?: string | null
  readonly active?: boolean
  /**
   * With `active: true`: also recover (re-queue) the webhook's failed deliveries created since
   * this time, as `webhooks.recover` does; within the event retention window.
   */
  readonly recover_since?: Timestamp
}

export interface Webhook {
  readonly id: string
  readonly url: string
  readonly events: ReadonlyArray<EventType>
  readonly description: string | null
  readonly active: boolean
  /**
   * Why mzk turned it off: every attempt of a delivery failed (`delivery_failures`), or the
   * endpoint answered 410 Gone (`endpoint_gone`).
   */
  readonly disabled_reason: "delivery_failures" | "endpoint_gone" | null
  /**
   * When the secret replaced by the last rotation stops (or stopped) signing deliveries beside
   * the current one; null when never rotated, or rotated without an overlap.
   */
  readonly previous_secret_expires_at: Timestamp | null
  readonly created_at: Timestamp
  readonly updated_at: Timestamp
}

export interface CreatedWebhook extends Webhook {
  /** The signing secret (`whsec_…`): in this response only. Verify deliveries with `@mzk/webhooks`. */
  readonly secret: string
}

export interface RotateWebhookSecretInput {
  /** Seconds the replaced secret keeps signing beside the new one, 0 to 604800 (7 days); default 86400 (24 h). */
  readonly expires_in?: number
  /**
   * Rotate even while an earlier rotation's overlap lasts (else 409 `secret_rotation_in_progress`):
   * the secret that rotation replaced stops at once.
   */
  readonly force?: boolean
}

export interface RotatedWebhook extends Webhook {
  /** The new signing secret (`whsec_…`): in this response only (and its replays). */
  readonly secret: string
}

export interface WebhookList {
  readonly webhooks: ReadonlyArray<Webhook>
  readonly total: number
  readonly has_more: boolean
}

/** What queued an attempt: the retry schedule, or a caller (test, retry, recovery: one attempt, never disabling the webhook). */
export type DeliveryTrigger = "scheduled" | "manual"

export type DeliveryErrorClass = "timeout" | "dns" | "connection" | "tls" | "blocked_address" | "invalid_url" | "other"

export interface DeliveryAttempt {
  readonly id: string
  readonly delivery_id: string
  readonly webhook_id: string
  readonly event_id: string
  readonly event_type: EventType
  /** 1 for the first attempt, 2 to 6 for the retries, then one more per manual retry or recovery. */
  readonly attempt: number
  /** `scheduled`: the first attempt or a retry of the schedule; `manual`: a test, a retry or a recovery. */
  readonly trigger: DeliveryTrigger
  readonly attempted_at: Timestamp
  readonly outcome: "succeeded" | "failed"
  /** The HTTP status, or null when no answer came. */
  readonly status_code: number | null
  /** Why no answer came, or null when one did. */
  readonly error: DeliveryErrorClass | null
  readonly latency_ms: number
  /** The start of the response body, at most 4 KiB. */
  readonly response_body: string | null
}

export interface DeliveryAttemptList {
  readonly deliveries: ReadonlyArray<DeliveryAttempt>
  readonly total: number
  readonly has_more: boolean
}

/** One event on its way to one webhook. */
export interface Delivery {
  readonly id: string
  readonly webhook_id: string
  readonly event_id: string
  readonly event_type: EventType
  /** `pending` until an attempt succeeds, the last retry fails, or the webhook is switched off or removed first (`cancelled`). */
  readonly status: DeliveryStatus
  /** What queued its pending or last attempt: the retry schedule, or a test, retry or recovery. */
  readonly trigger: DeliveryTrigger
  /** Attempts made so far; each is in the webhook's delivery log. */
  readonly attempts: number
  /** When the next attempt is due; null once settled. */
  readonly next_attempt_at: Timestamp | null
  readonly last_attempt_at: Timestamp | null
  readonly created_at: Timestamp
  readonly updated_at: Timestamp
}

export type DeliveryStatus = "pending" | "succeeded" | "failed" | "cancelled"

/** `webhooks.test`: the `webhook.test` event and its delivery to the webhook tested. */
export interface WebhookTest {
  readonly event: Event
  readonly delivery: Delivery
}

export interface RecoverWebhookInput {
  /** Recover the deliveries created at or after this time; within the event retention window (30 days by default). */
  readonly since: Timestamp
}

export type RecoveryStatus = "running" | "completed" | "cancelled"

/** A background re-queueing of a webhook's failed deliveries (`webhooks.recover`, or a re-enabling update with `recover_since`). */
export interface Recovery {
  readonly id: string
  readonly webhook_id: string
  /** `cancelled` when the webhook was switched off or removed first. */
  readonly status: RecoveryStatus
  readonly since: Timestamp
  /** When the recovery was asked for: deliveries created after it are not its business. */
  readonly until: Timestamp
  /** Deliveries re-queued so far, each for one more attempt. */
  readonly requeued: number
  readonly created_at: Timestamp
  readonly completed_at: Timestamp | null
}

export interface RecoveryList {
  readonly recoveries: ReadonlyArray<Recovery>
  readonly total: number
  readonly has_more: boolean
}

// ---- Events

/** An event as webhooks receive it; `data` depends on `type` (`@mzk/webhooks` types each one). */
export interface Event {
  readonly id: string
  readonly type: EventType
  readonly created_at: Timestamp
  readonly data: { readonly [field: string]: unknown }
}

export interface EventList {
  readonly events: ReadonlyArray<Event>
  readonly total: number
  readonly has_more: boolean
}

/** `events.list`: newest first; `starting_after` an event id moves on to older ones. */
export interface ListEventsQuery extends PageQuery {
  /** One type, or several. */
  readonly type?: EventType | readonly [EventType, ...Array<EventType>]
  /** Created at or after this time. */
  readonly created_gte?: Timestamp
  /** Created before this time. */
  readonly created_lt?: Timestamp
}

// ---- Proofs

/** An integer as a JSON number or a decimal string; nested arrays for array inputs. */
export type ProofInputValue = string | number | ReadonlyArray<ProofInputValue>

export interface CreateProofInput {
  /** The circuit: a built-in one, or the account's own once ready. */
  readonly type: string
  readonly inputs: { readonly [name: string]: ProofInputValue }
}

export interface CreateProofBatchInput {
  /** 1 to 100, accepted or refused as a whole. */
  readonly proofs: ReadonlyArray<CreateProofInput>
}

export type ProofStatus = "queued" | "running" | "completed" | "failed" | "canceled" | "expired"

export interface ProofError {
  readonly code: "constraint_violation" | "invalid_inputs" | "timeout" | "verification_failed" | "internal"
  readonly message: string
}

export interface Proof {
  readonly proof_id: string
  readonly type: string
  readonly circuit: string
  readonly status: ProofStatus
  /** Public signal names → decimal strings. */
  readonly public_inputs: { readonly [signal: string]: string }
  /** base64 of the snarkjs proof JSON, once completed. */
  readonly proof_blob: string | null
  readonly error: ProofError | null
  readonly duration_ms: number | null
  readonly created_at: Timestamp
  readonly started_at: Timestamp | null
  readonly completed_at: Timestamp | null
  /** When it was canceled (`proofs.cancel`); null otherwise. */
  readonly canceled_at: Timestamp | null
  readonly expires_at: Timestamp | null
}

export interface ProofList {
  readonly proofs: ReadonlyArray<Proof>
  readonly total: number
  readonly has_more: boolean
}

export interface ListProofsQuery extends PageQuery {
  readonly status?: ProofStatus
}

export interface ProofBatch {
  readonly batch_id: string
  readonly proofs: ReadonlyArray<Proof>
}

/** `proofs.cancelBatch`: the batch's proofs once its queued and running ones were canceled. */
export interface ProofBatchCancellation {
  readonly batch_id: string
  /** Proofs this request canceled (0 when the batch had settled). */
  readonly canceled_count: number
  readonly proofs: ReadonlyArray<Proof>
}

export interface ProofVerification {
  readonly proof_id: string
  readonly circuit: string
  readonly valid: boolean
  readonly verified_at: Timestamp
}

/** A completed proof as the call of its circuit's Solidity verifier (`circuits.verifier`). */
export interface ProofCalldata {
  /** `verifyProof(uint256[2],uint256[2][2],uint256[2],uint256[N])` */
  readonly function: string
  /** a, b, c and the public signals, each a uint256 as a decimal string. */
  readonly arguments: readonly [
    ReadonlyArray<string>,
    ReadonlyArray<ReadonlyArray<string>>,
    ReadonlyArray<string>,
    ReadonlyArray<string>
  ]
  /** The ABI-encoded call, `0x…`, ready to send to the verifier contract. */
  readonly calldata: string
}

// ---- Circuits

export type CircuitStatus = "compiling" | "ready" | "failed"

export interface CircuitError {
  readonly code:
    | "compile_error"
    | "include_outside_upload"
    | "circuit_too_large"
    | "compile_timeout"
    | "compile_memory_exceeded"
    | "invalid_artifacts"
    | "artifact_mismatch"
    | "sample_inputs_required"
    | "internal"
  readonly message: string
  readonly file?: string
  readonly line?: number
}

export interface CircuitInput {
  readonly name: string
  readonly visibility: "public" | "private"
  readonly kind: "field" | "uint64" | "bit"
  /** Array dimensions, outermost first; `[]` for a single value. */
  readonly dimensions: ReadonlyArray<number>
}

export interface Circuit {
  readonly name: string
  /** `builtin`, or the id of the account that uploaded it. */
  readonly owner: string
  readonly status: CircuitStatus
  readonly error: CircuitError | null
  readonly description: string | null
  readonly constraints: number | null
  readonly inputs: ReadonlyArray<CircuitInput>
  readonly public_signals: ReadonlyArray<string>
  /** Built with a trusted setup nobody can rely on: for testing only. */
  readonly development_only: boolean
  readonly created_at: Timestamp
}

export interface CircuitWithKey extends Circuit {
  /** The Groth16 verification key as snarkjs exports it; null until ready. */
  readonly verification_key: unknown
}

export interface CircuitList {
  readonly circuits: ReadonlyArray<Circuit>
}

/** A file's bytes: a `Blob`/`File` (e.g. from `fs.openAsBlob`), bytes, or text. */
export type FileContent = Blob | Uint8Array | ArrayBuffer | string

/** A file with its name: a `File`, or content with a `filename`. */
export type NamedFile =
  | (Blob & { readonly name: string })
  | { readonly filename: string; readonly content: FileContent; readonly contentType?: string }

export type UploadFile = FileContent | NamedFile

/**
 * `circuits.create`: circom sources (`main`, plus every file it includes as `sources`, each named
 * by its path relative to `main`, e.g. `lib/util.circom`), or prebuilt artifacts (`wasm`, `zkey`,
 * `sym`, optionally `r1cs`).
 */
export interface CircuitUpload {
  /** 1–64 letters, digits, `_` or `-`: the `type` of its proofs. */
  readonly name: string
  readonly description?: string
  /** Its filename is its path in the upload; `main.circom` when it has none. */
  readonly main?: UploadFile
  readonly sources?: ReadonlyArray<NamedFile>
  readonly wasm?: UploadFile
  readonly zkey?: UploadFile
  readonly sym?: UploadFile
  readonly r1cs?: UploadFile
}

// ---- Audit log

export type AuditAction =
  | "key.created"
  | "key.revoked"
  | "key.rolled"
  | "webhook.created"
  | "webhook.updated"
  | "webhook.deleted"
  | "webhook.disabled"
  | "webhook.secret_rotated"
  | "circuit.created"
  | "circuit.removed"

/** A field's value in an audit entry's `changes`. */
export type AuditValue = string | boolean | ReadonlyArray<string> | null

/** One change of a key, webhook or circuit: who made it, from where, and what it changed. */
export interface AuditEntry {
  /** `aud_…`; entries sort by time. */
  readonly id: string
  readonly action: AuditAction
  /** An API key (`id`: its key id), a session (the id its application gave, or null), the `mzk` command line, or mzk itself. */
  readonly actor: { readonly type: "api_key" | "session" | "cli" | "system"; readonly id: string | null }
  readonly target: { readonly type: "api_key" | "webhook" | "circuit"; readonly id: string; readonly name: string | null }
  readonly request_id: string | null
  readonly ip_address: string | null
  readonly user_agent: string | null
  /** The fields the action set or changed, before and after; null where it changed none it shows (a revocation, a removal). */
  readonly changes: ReadonlyArray<{ readonly field: string; readonly from: AuditValue; readonly to: AuditValue }> | null
  readonly created_at: Timestamp
}

export interface AuditLogPage {
  readonly entries: ReadonlyArray<AuditEntry>
  readonly total: number
  readonly has_more: boolean
}

/** Newest first: `starting_after` is the last id of the previous page; the filters narrow the log. */
export interface AuditLogQuery extends PageQuery {
  readonly action?: AuditAction
  /** A key, webhook or circuit id. */
  readonly target_id?: string
  /** A key id, or a session's actor id. */
  readonly actor_id?: string
}
