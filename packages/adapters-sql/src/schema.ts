import type { ColumnType } from "kysely"

/**
 * The tables as Kysely sees them. Timestamps are ISO 8601 text (they sort as text and round-trip
 * exactly, milliseconds included); arrays and event bodies are JSON text; booleans are 0/1
 * integers: types every SQL database stores alike, so one row mapping serves every dialect.
 */
export interface AccountsTable {
  id: string
  name: string
  created_at: string
}

export interface ApiKeysTable {
  id: string
  account_id: string
  name: string
  description: string | null
  prefix: string
  scopes: string
  hash: string
  created_at: string
  last_used_at: string | null
  revoked_at: string | null
  expires_at: string | null
  replaced_by: string | null
  /** JSON object of string values; `{}` when none. */
  metadata: ColumnType<string, string | undefined, string>
}

export interface WebhooksTable {
  id: string
  account_id: string
  url: string
  events: string
  description: string | null
  active: number
  disabled_reason: string | null
  secret: string
  previous_secret: string | null
  previous_secret_expires_at: string | null
  created_at: string
  updated_at: string
  /** JSON object of string values; `{}` when none. */
  metadata: ColumnType<string, string | undefined, string>
}

export interface EventsTable {
  id: string
  account_id: string
  type: string
  created_at: string
  data: string
}

export interface DeliveriesTable {
  id: string
  account_id: string
  event_id: string
  webhook_id: string
  status: string
  trigger: string
  attempts: number
  next_attempt_at: string | null
  lease_expires_at: string | null
  first_failed_at: string | null
  last_attempt_at: string | null
  created_at: string
  updated_at: string
}

export interface DeliveryAttemptsTable {
  id: string
  account_id: string
  delivery_id: string
  webhook_id: string
  event_id: string
  event_type: string
  attempt: number
  trigger: string
  attempted_at: string
  outcome: string
  status_code: number | null
  error: string | null
  latency_ms: number
  response_body: string | null
}

export interface RateCountersTable {
  bucket: string
  // A 64-bit column: a driver may return it as text to keep precision; epoch milliseconds fit a double exactly.
  window_start: ColumnType<number | string, number, number>
  count: number
}

export interface ProofsTable {
  id: string
  account_id: string
  batch_id: string | null
  type: string
  circuit: string
  circuit_id: string | null
  /** The circuit's version when the proof was created (1 for a built-in circuit). */
  circuit_version: ColumnType<number, number | undefined, number>
  proving_system: ColumnType<string, string | undefined, string>
  status: string
  inputs: string | null
  public_inputs: string
  proof_blob: string | null
  error: string | null
  duration_ms: number | null
  proving_ms: number | null
  /** 0 high, 1 normal, 2 low: the order a claim takes an account's queued proofs in. */
  priority_rank: number
  deadline_at: string | null
  attempts: number
  lease_expires_at: string | null
  created_at: string
  started_at: string | null
  /** A completed proof's only. */
  completed_at: string | null
  /** When it settled: completed, failed or canceled. */
  finished_at: string | null
  canceled_at: string | null
  expires_at: string | null
  /** `proofDigest` of a completed proof: how `POST /verifications` recognises the account's own. */
  proof_digest: string | null
  /** JSON object of string values; `{}` when none. */
  metadata: ColumnType<string, string | undefined, string>
}

/** Registered verification keys; the key itself as JSON text. */
export interface VerificationKeysTable {
  id: string
  account_id: string
  name: string | null
  proving_system: string
  n_public: number
  verification_key: string
  created_at: string
}

/** Accounts' circuits; JSON text for the structured fields, as elsewhere. Removed rows stay, with `removed_at`. */
export interface CircuitsTable {
  id: string
  account_id: string
  name: string
  /** 1, 2, … per account and name, in upload order; never reused (removed rows keep theirs). */
  version: number
  status: string
  error: string | null
  description: string | null
  constraints: number | null
  inputs: string
  public_signals: string
  verification_key: string | null
  development_only: number
  proving_system: ColumnType<string, string | undefined, string>
  field_modulus: string
  artifacts: string | null
  source: string
  lease_expires_at: string | null
  attempts: number
  created_at: string
  updated_at: string
  removed_at: string | null
  /** JSON object of string values; `{}` when none. */
  metadata: ColumnType<string, string | undefined, string>
}

/** Which artifacts each circuit refers to: what decides, on removal, which artifacts nothing needs any more. */
export interface CircuitArtifactsTable {
  circuit_id: string
  digest: string
}

/** Content-addressed bytes: one row per digest, the bytes in `artifact_chunks`. */
export interface ArtifactsTable {
  digest: string
  // A 64-bit column: a driver may return it as text.
  size: ColumnType<number | string, number, number>
  chunks: number
}

export interface ArtifactChunksTable {
  digest: string
  /** The chunk's place, from 0. */
  idx: number
  data: Uint8Array
}

export interface IdempotencyKeysTable {
  account_id: string
  key: string
  fingerprint: string
  request_id: string
  response_status: number | null
  /** JSON object of the response's own headers. */
  response_headers: string | null
  response_body: string | null
  created_at: string
  expires_at: string
  locked_until: string | null
}

/** The audit log: append-only; actor and target flattened into columns so listings filter on them. */
export interface AuditLogTable {
  id: string
  account_id: string
  action: string
  actor_type: string
  actor_id: string | null
  target_type: string
  target_id: string
  target_name: string | null
  request_id: string | null
  ip_address: string | null
  user_agent: string | null
  /** JSON object of the changed fields, or null. */
  changes: string | null
  created_at: string
}

export interface WebhookRecoveriesTable {
  id: string
  account_id: string
  webhook_id: string
  status: string
  since: string
  until: string
  requeued: number
  cursor: string | null
  lease_expires_at: string | null
  created_at: string
  updated_at: string
  completed_at: string | null
}

/** The row readiness rewrites (`StorageHealth.check`): one, id 1. */
export interface ReadinessProbeTable {
  id: number
  probed_at: string
}

export interface Database {
  verification_keys: VerificationKeysTable
  readiness_probe: ReadinessProbeTable
  audit_log: AuditLogTable
  webhook_recoveries: WebhookRecoveriesTable
  idempotency_keys: IdempotencyKeysTable
  circuits: CircuitsTable
  circuit_artifacts: CircuitArtifactsTable
  artifacts: ArtifactsTable
  artifact_chunks: ArtifactChunksTable
  proofs: ProofsTable
  delivery_attempts: DeliveryAttemptsTable
  accounts: AccountsTable
  api_keys: ApiKeysTable
  webhooks: WebhooksTable
  events: EventsTable
  deliveries: DeliveriesTable
  rate_counters: RateCountersTable
}
