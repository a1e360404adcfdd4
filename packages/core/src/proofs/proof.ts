import { ParseResult, Schema } from "effect"
import { AccountId, BatchId, type CircuitId, ProofId } from "../kernel/ids.js"
import { type Metadata, MetadataField, MetadataFilter, MetadataInput, pairsFrom } from "../kernel/metadata.js"
import { pageQuery } from "../kernel/paging.js"
import { ProvingSystem } from "../kernel/provingSystem.js"
import { millisFromTimestamp, Timestamp, timestampFromMillis } from "../kernel/time.js"

export const PROOF_STATUSES = ["queued", "running", "completed", "failed", "canceled", "expired"] as const
export const ProofStatus = Schema.Literal(...PROOF_STATUSES).annotations({ identifier: "ProofStatus" })
export type ProofStatus = typeof ProofStatus.Type

/**
 * Why a proof failed. `verification_failed`: the prover made a proof that does not verify against
 * the circuit's verification key (a fault of the prover or of the circuit's artifacts, never of the
 * inputs), so it was not reported completed.
 */
export const ProofErrorCode = Schema.Literal("constraint_violation", "invalid_inputs", "timeout", "verification_failed", "internal")
  .annotations({
    description: "`constraint_violation`: the inputs do not satisfy the circuit; `invalid_inputs`; `timeout`; " +
      "`verification_failed`: the proof made does not verify against the circuit's verification key (a fault of the prover " +
      "or of the circuit's artifacts, not of the inputs), so it is not reported and its unit of the daily quota is given back; " +
      "`internal`"
  })
export type ProofErrorCode = typeof ProofErrorCode.Type

/**
 * Failures that are not the account's doing, whose proof gives its unit of the daily quota back.
 * The others stay charged: bad inputs and unsatisfied constraints are the caller's, a timeout
 * measures the circuit it chose, and `internal` also covers a circuit's own wasm failing.
 */
export const isRefundedFailure = (code: ProofErrorCode): boolean => code === "verification_failed"
export const ProofError = Schema.Struct({ code: ProofErrorCode, message: Schema.String })

/** The failure of a proof whose request's deadline passed before a worker started it. */
export const overdueError: { readonly code: "timeout"; readonly message: string } = {
  code: "timeout",
  message: "The request's deadline (timeout_ms) passed while the proof was queued; it was never started"
}

/**
 * The times a proof settles with (completed or failed), from one reading of the clock (`nowMs`):
 * `finished_at`, `duration_ms` exactly `finished_at − started_at` (0 for a proof that never
 * started), and `expires_at` a retention window after `finished_at`. A clock that stepped back
 * since the start settles the proof at its start, so the timeline never runs backwards.
 */
export const settledTimes = (startedAt: Timestamp | null, nowMs: number, retentionMs: number) => {
  const startedMs = startedAt === null ? null : millisFromTimestamp(startedAt)
  const finishedMs = startedMs === null ? nowMs : Math.max(nowMs, startedMs)
  const finished_at = timestampFromMillis(finishedMs)
  return {
    finished_at,
    duration_ms: startedMs === null ? 0 : millisFromTimestamp(finished_at) - startedMs,
    expires_at: timestampFromMillis(finishedMs + retentionMs)
  }
}

/** Public signal names → decimal strings (field elements do not fit a JSON number). */
export const PublicInputs = Schema.Record({ key: Schema.String, value: Schema.String })

/** An input value: an integer as a JSON number or a decimal string; nested arrays for array inputs (outermost dimension first). */
export type ProofInputValue = string | number | ReadonlyArray<ProofInputValue>
export const ProofInputValue: Schema.Schema<ProofInputValue> = Schema.Union(
  Schema.String,
  Schema.Number,
  Schema.Array(Schema.suspend((): Schema.Schema<ProofInputValue> => ProofInputValue))
).annotations({ identifier: "ProofInputValue" })
/**
 * A proof's place within its account's queue: the account's queued proofs are claimed `high`
 * first, then `normal`, then `low`, each oldest first. It never moves a proof ahead of another
 * account's: accounts still take turns (`takeInTurns`).
 */
export const PROOF_PRIORITIES = ["low", "normal", "high"] as const
export const ProofPriority = Schema.Literal(...PROOF_PRIORITIES).annotations({ identifier: "ProofPriority" })
export type ProofPriority = typeof ProofPriority.Type
export const DEFAULT_PROOF_PRIORITY: ProofPriority = "normal"

/** The order a claim takes an account's queued proofs in: lower first (stored as `proofs.priority_rank`). */
export const priorityRank = (priority: ProofPriority): number => (priority === "high" ? 0 : priority === "normal" ? 1 : 2)
export const priorityOfRank = (rank: number): ProofPriority => (rank === 0 ? "high" : rank === 1 ? "normal" : "low")

/** A request's deadline in milliseconds from its acceptance; the server's proof timeout caps it (checked by `Proofs`). */
export const TimeoutMs = Schema.Int.pipe(Schema.positive({ message: () => "must be a positive integer (milliseconds)" }))
  .annotations({
    description: "A deadline for the proof, in milliseconds from its acceptance: a proof still queued at it fails with " +
      "`timeout`, a running one is stopped at it (or at the server's proof timeout, whichever comes first). At most the " +
      "server's proof timeout (60000 by default); more is 400 naming the field."
  })

export const CreateProofInput = Schema.Struct({
  type: Schema.String,
  inputs: Schema.Record({ key: Schema.String, value: ProofInputValue }),
  priority: Schema.optionalWith(ProofPriority, { exact: true }).annotations({
    description: "`low`, `normal` (the default) or `high`: the order of this account's queued proofs (high first, then oldest first)"
  }),
  timeout_ms: Schema.optionalWith(TimeoutMs, { exact: true }),
  metadata: Schema.optionalWith(MetadataInput, { exact: true }),
  proving_system: Schema.optionalWith(ProvingSystem, { exact: true }).annotations({
    description: "The system to prove with: one of the circuit's `proving_systems` (default: its `proving_system`). " +
      "Built-in circuits have keys for several; an account's circuit only for the one it was set up for"
  })
}).annotations({ identifier: "CreateProofInput" })
export type CreateProofInput = typeof CreateProofInput.Type

/**
 * `POST /proofs/batch`: 1 to `maxBatchSize` requests, accepted or refused as a whole. The batch's
 * `metadata` is copied onto each of its proofs, under each item's own (an item's key wins).
 */
export const CreateProofBatchInput = Schema.Struct({
  proofs: Schema.Array(CreateProofInput),
  metadata: Schema.optionalWith(
    MetadataInput.annotations({
      description: "Copied onto every proof of the batch (a key an item sets itself keeps the item's value); at most 50 keys per proof"
    }),
    { exact: true }
  )
})
  .annotations({ identifier: "CreateProofBatchInput" })
export type CreateProofBatchInput = typeof CreateProofBatchInput.Type

/**
 * A query parameter `metadata[<key>]=<value>`: only proofs whose metadata holds that pair. A query
 * string is flat, so the filter's keys are parameters of their own, as in Stripe's search.
 */
export const MetadataFilterParam = Schema.TemplateLiteral("metadata[", Schema.String, "]")

/**
 * The metadata filter of a decoded listing query: `metadata[order]=1` → `{order: "1"}`, every pair
 * kept (`metadata[__proto__]=x` too: a filter that lost a pair would match more than asked).
 */
export const metadataFilterOf = (query: Readonly<Record<string, unknown>>): Metadata | undefined => {
  const pairs: Array<readonly [string, string]> = []
  for (const name of Object.keys(query)) {
    const value = query[name]
    if (name.startsWith("metadata[") && name.endsWith("]") && typeof value === "string") pairs.push([name.slice(9, -1), value])
  }
  return pairs.length === 0 ? undefined : pairsFrom(pairs)
}

/**
 * A proof listing's query: the page, optionally only proofs with `status`, and only those whose
 * metadata holds every `metadata[<key>]=<value>` pair (exact matches). A bad key or value is a 400
 * naming its parameter, `metadata[<key>]`.
 */
export const ListProofsQuery = Schema.Struct(
  { ...pageQuery(ProofId).fields, status: Schema.optionalWith(ProofStatus, { exact: true }) },
  Schema.Record({
    key: MetadataFilterParam,
    value: Schema.String.annotations({ description: "`metadata[<key>]=<value>`: only proofs whose metadata holds the pair" })
  })
).pipe(Schema.filter((query) => {
  const filter = metadataFilterOf(query)
  if (filter === undefined) return undefined
  const problems = Schema.validateEither(MetadataFilter, { errors: "all" })(filter)
  if (problems._tag === "Right") return undefined
  return ParseResult.ArrayFormatter.formatErrorSync(problems.left).map((issue) => ({
    path: issue.path.length === 0 ? ["metadata"] : [`metadata[${String(issue.path[0])}]`],
    message: issue.message
  }))
}))
export type ListProofsQuery = typeof ListProofsQuery.Type

/**
 * A Groth16 proof as snarkjs writes it: `pi_a` and `pi_c` are G1 points, `pi_b` a G2 point, each in
 * projective form with decimal coordinates (the last one "1"). Provers may add fields of their own.
 */
export const Groth16Proof = Schema.Struct({
  pi_a: Schema.Array(Schema.String),
  pi_b: Schema.Array(Schema.Array(Schema.String)),
  pi_c: Schema.Array(Schema.String),
  protocol: Schema.String,
  curve: Schema.String
})
export type Groth16Proof = typeof Groth16Proof.Type

/**
 * A proof as snarkjs writes it, of any system: `protocol` (groth16, plonk, fflonk) and `curve`
 * name it, the rest is the system's own (points and evaluations as decimal strings).
 */
export const SnarkjsProof = Schema.Struct(
  { protocol: Schema.String, curve: Schema.String },
  Schema.Record({ key: Schema.String, value: Schema.Unknown })
)
export type SnarkjsProof = typeof SnarkjsProof.Type

/** One input signal after validation: a decimal string, or nested arrays of them for an array signal. */
export type CircuitInputValue = string | ReadonlyArray<CircuitInputValue>
/** Circuit input signals after validation, by name. */
export type CircuitInputs = Readonly<Record<string, CircuitInputValue>>

/** Which version of `circuit` a proof was (to be) made with: what `name@N` names; 1 for a built-in circuit. */
export const CircuitVersion = Schema.Int.annotations({
  description: "Which version of `circuit` the proof was made with (`circuit@circuit_version`); 1 for a built-in circuit"
})

export const Proof = Schema.Struct({
  proof_id: ProofId,
  type: Schema.String.annotations({ description: "The `type` as the request sent it: `name` or `name@N`" }),
  circuit: Schema.String,
  circuit_version: CircuitVersion,
  proving_system: ProvingSystem,
  status: ProofStatus,
  public_inputs: PublicInputs.annotations({ description: "Public signal names → decimal strings (field elements do not fit a JSON number)" }),
  proof_blob: Schema.NullOr(Schema.String).annotations({
    description: "base64 of the snarkjs proof JSON (`ultra_honk`: `{protocol, curve, proof}`, proof bb.js's proof bytes as " +
      "0x-hex, its public inputs apart, as `public_inputs`)"
  }),
  error: Schema.NullOr(ProofError),
  duration_ms: Schema.NullOr(Schema.Int).annotations({
    description: "Generation time, exactly `finished_at − started_at` of a proof that completed or failed: from a worker " +
      "starting it to its settling, loading the circuit, the prover and the check of the proof against the verification key " +
      "included. 0 for a proof that failed without ever starting (its deadline passed while it was queued); null until it " +
      "settles, and for a canceled proof"
  }),
  proving_ms: Schema.NullOr(Schema.Int).annotations({
    description: "The prover's own time on the proof within `duration_ms` (witness and proof, until it answered, failed or " +
      "was stopped), as the prover measured it: never more than `duration_ms`, never the start of the prover's threads; " +
      "null until it settles, and for a proof the prover never ran"
  }),
  priority: ProofPriority,
  deadline_at: Schema.NullOr(Timestamp).annotations({ description: "`created_at` + the request's `timeout_ms`; null without one" }),
  queue_position: Schema.NullOr(Schema.Int).annotations({
    description: "While queued: its place in its account's queue, 1-based, in the order the account's proofs are claimed " +
      "(priority, then oldest first); null otherwise. Other accounts' proofs are not counted: accounts take turns."
  }),
  created_at: Timestamp,
  queued_at: Timestamp.annotations({ description: "When the proof was accepted and queued (equals `created_at`)" }),
  started_at: Schema.NullOr(Timestamp).annotations({
    description: "When a worker started it (the latest start, for a proof taken over after its worker stopped); null while " +
      "queued, and for a proof that never started (failed `timeout` while queued, or canceled while queued)"
  }),
  finished_at: Schema.NullOr(Timestamp).annotations({
    description: "When it settled, however it did: completed, failed or canceled; null before"
  }),
  completed_at: Schema.NullOr(Timestamp).annotations({
    description: "When it completed (then equal to `finished_at`); null for a proof that did not complete: queued, running, " +
      "failed or canceled. An expired proof keeps it if it had completed"
  }),
  canceled_at: Schema.NullOr(Timestamp).annotations({ description: "When the proof was canceled (`POST /proofs/{id}/cancel`); null otherwise" }),
  expires_at: Schema.NullOr(Timestamp),
  metadata: MetadataField
}).annotations({ identifier: "Proof" })
export type Proof = typeof Proof.Type

/** The events' `duration_ms`: the record's, as it settled. */
const EventDurationMs = Schema.Int.annotations({
  description: "Generation time in milliseconds: the record's `duration_ms`, exactly its `finished_at − started_at` (0 for a proof that never started)"
})

/** `data` of each proof event (spec 2.4 and DESIGN §3). */
export const ProofCompletedData = Schema.Struct({
  proof_id: ProofId,
  circuit: Schema.String,
  circuit_version: CircuitVersion,
  proving_system: ProvingSystem,
  status: Schema.Literal("completed"),
  proof_blob: Schema.String,
  public_inputs: PublicInputs,
  duration_ms: EventDurationMs,
  created_at: Timestamp,
  metadata: MetadataField
})
export const ProofFailedData = Schema.Struct({
  proof_id: ProofId,
  circuit: Schema.String,
  circuit_version: CircuitVersion,
  proving_system: ProvingSystem,
  status: Schema.Literal("failed"),
  error: ProofError,
  public_inputs: PublicInputs,
  duration_ms: EventDurationMs,
  created_at: Timestamp,
  metadata: MetadataField
})
export const ProofExpiredData = Schema.Struct({
  proof_id: ProofId,
  circuit: Schema.String,
  circuit_version: CircuitVersion,
  status: Schema.Literal("expired"),
  created_at: Timestamp,
  expired_at: Timestamp,
  metadata: MetadataField
})
export const ProofCanceledData = Schema.Struct({
  proof_id: ProofId,
  circuit: Schema.String,
  circuit_version: CircuitVersion,
  status: Schema.Literal("canceled"),
  canceled_at: Timestamp,
  created_at: Timestamp,
  metadata: MetadataField
})
export const ProofVerifiedData = Schema.Struct({
  proof_id: ProofId,
  circuit: Schema.String,
  circuit_version: CircuitVersion,
  proving_system: ProvingSystem,
  valid: Schema.Boolean,
  verified_at: Timestamp,
  metadata: MetadataField
})

/**
 * A proof as storage keeps it: the API record plus what the worker needs. `inputs` holds the
 * validated circuit inputs (private ones included) until the proof settles, then it is cleared.
 * `attempts` counts claims; it is the lease token, so a worker whose lease was taken over cannot
 * settle the proof any more.
 */
export interface ProofRecord {
  readonly id: ProofId
  readonly account_id: AccountId
  readonly batch_id: BatchId | null
  readonly type: string
  readonly circuit: string
  /**
   * The account's circuit the proof was made with; null for a built-in one. Kept after the circuit
   * is removed, so the proof still verifies against its key (a new circuit may reuse the name).
   */
  readonly circuit_id: CircuitId | null
  /** The circuit's version (`circuit@circuit_version`), copied from it when the proof is created; 1 for a built-in one. */
  readonly circuit_version: number
  /** The system the proof is (to be) made with: the circuit's own, or one a built-in circuit also has. */
  readonly proving_system: ProvingSystem
  readonly status: ProofStatus
  readonly inputs: CircuitInputs | null
  readonly public_inputs: Readonly<Record<string, string>>
  readonly proof_blob: string | null
  readonly error: ProofError | null
  readonly duration_ms: number | null
  /** The prover's own time within `duration_ms`; null until settled, or when the prover never ran. */
  readonly proving_ms: number | null
  readonly priority: ProofPriority
  /** Past it a queued proof fails with `timeout` and a running one is stopped; null without a `timeout_ms`. */
  readonly deadline_at: Timestamp | null
  readonly attempts: number
  /** While running: when the claim lapses and another worker may take the proof over. */
  readonly lease_expires_at: Timestamp | null
  readonly created_at: Timestamp
  /** When the worker that holds (or held) it started it: its claim; null while queued and for a proof that never started. */
  readonly started_at: Timestamp | null
  /** When it completed; null unless it did (a failed or canceled proof has none). */
  readonly completed_at: Timestamp | null
  /** When it settled: completed, failed or canceled; null before. */
  readonly finished_at: Timestamp | null
  /** When it was canceled; null unless `canceled`. */
  readonly canceled_at: Timestamp | null
  readonly expires_at: Timestamp | null
  /** The application's own pairs (`{}` when none), set at creation, copied into every event about the proof. */
  readonly metadata: Metadata
}
export type ProofError = typeof ProofError.Type

/** The API record; `queuePosition` is the proof's place in its account's queue while queued (`ProofsRepo.queuePositions`). */
export const toProof = (record: ProofRecord, queuePosition: number | null = null): Proof => ({
  proof_id: record.id,
  type: record.type,
  circuit: record.circuit,
  circuit_version: record.circuit_version,
  proving_system: record.proving_system,
  status: record.status,
  public_inputs: record.public_inputs,
  proof_blob: record.proof_blob,
  error: record.error,
  duration_ms: record.duration_ms,
  proving_ms: record.proving_ms,
  priority: record.priority,
  deadline_at: record.deadline_at,
  queue_position: record.status === "queued" ? queuePosition : null,
  created_at: record.created_at,
  queued_at: record.created_at,
  started_at: record.started_at,
  finished_at: record.finished_at,
  completed_at: record.completed_at,
  canceled_at: record.canceled_at,
  expires_at: record.expires_at,
  metadata: record.metadata
})

/** A batch create's response. */
export const ProofBatch = Schema.Struct({
  batch_id: BatchId,
  metadata: MetadataField.annotations({ description: "The batch's own metadata, as sent (each proof carries it, merged with its own)" }),
  proofs: Schema.Array(Proof)
}).annotations({ identifier: "ProofBatch" })
export type ProofBatch = typeof ProofBatch.Type

/**
 * `POST /proofs/batch/:batch_id/cancel`: the batch's proofs as they stand once its queued and
 * running ones were canceled, and how many that was (0 when none could be: the batch had settled).
 */
export const ProofBatchCancellation = Schema.Struct({
  batch_id: BatchId,
  canceled_count: Schema.Int.annotations({ description: "Proofs this request canceled (those that were queued or running)" }),
  proofs: Schema.Array(Proof)
}).annotations({ identifier: "ProofBatchCancellation" })
export type ProofBatchCancellation = typeof ProofBatchCancellation.Type

/** `GET /proofs/:id/verify`. */
export const ProofVerification = ProofVerifiedData.annotations({ identifier: "ProofVerification" })
export type ProofVerification = typeof ProofVerification.Type
