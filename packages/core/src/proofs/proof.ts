import { Schema } from "effect"
import { AccountId, BatchId, type CircuitId, ProofId } from "../kernel/ids.js"
import { pageQuery } from "../kernel/paging.js"
import { ProvingSystem } from "../kernel/provingSystem.js"
import { Timestamp } from "../kernel/time.js"

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

/** Public signal names → decimal strings (field elements do not fit a JSON number). */
export const PublicInputs = Schema.Record({ key: Schema.String, value: Schema.String })

/** An input value: an integer as a JSON number or a decimal string; nested arrays for array inputs (outermost dimension first). */
export type ProofInputValue = string | number | ReadonlyArray<ProofInputValue>
export const ProofInputValue: Schema.Schema<ProofInputValue> = Schema.Union(
  Schema.String,
  Schema.Number,
  Schema.Array(Schema.suspend((): Schema.Schema<ProofInputValue> => ProofInputValue))
).annotations({ identifier: "ProofInputValue" })
export const CreateProofInput = Schema.Struct({
  type: Schema.String,
  inputs: Schema.Record({ key: Schema.String, value: ProofInputValue }),
  proving_system: Schema.optionalWith(ProvingSystem, { exact: true }).annotations({
    description: "The system to prove with: one of the circuit's `proving_systems` (default: its `proving_system`). " +
      "Built-in circuits have keys for several; an account's circuit only for the one it was set up for"
  })
}).annotations({ identifier: "CreateProofInput" })
export type CreateProofInput = typeof CreateProofInput.Type

/** `POST /proofs/batch`: 1 to `maxBatchSize` requests, accepted or refused as a whole. */
export const CreateProofBatchInput = Schema.Struct({ proofs: Schema.Array(CreateProofInput) })
  .annotations({ identifier: "CreateProofBatchInput" })
export type CreateProofBatchInput = typeof CreateProofBatchInput.Type

/** A proof listing's query: the page, optionally only proofs with `status`. */
export const ListProofsQuery = Schema.Struct({ ...pageQuery(ProofId).fields, status: Schema.optionalWith(ProofStatus, { exact: true }) })
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

export const Proof = Schema.Struct({
  proof_id: ProofId,
  type: Schema.String,
  circuit: Schema.String,
  proving_system: ProvingSystem,
  status: ProofStatus,
  public_inputs: PublicInputs.annotations({ description: "Public signal names → decimal strings (field elements do not fit a JSON number)" }),
  proof_blob: Schema.NullOr(Schema.String).annotations({
    description: "base64 of the snarkjs proof JSON (`ultra_honk`: `{protocol, curve, proof}`, proof bb.js's proof bytes as " +
      "0x-hex, its public inputs apart, as `public_inputs`)"
  }),
  error: Schema.NullOr(ProofError),
  duration_ms: Schema.NullOr(Schema.Int),
  created_at: Timestamp,
  started_at: Schema.NullOr(Timestamp),
  completed_at: Schema.NullOr(Timestamp),
  canceled_at: Schema.NullOr(Timestamp).annotations({ description: "When the proof was canceled (`POST /proofs/{id}/cancel`); null otherwise" }),
  expires_at: Schema.NullOr(Timestamp)
}).annotations({ identifier: "Proof" })
export type Proof = typeof Proof.Type

/** `data` of each proof event (spec 2.4 and DESIGN §3). */
export const ProofCompletedData = Schema.Struct({
  proof_id: ProofId,
  circuit: Schema.String,
  proving_system: ProvingSystem,
  status: Schema.Literal("completed"),
  proof_blob: Schema.String,
  public_inputs: PublicInputs,
  duration_ms: Schema.Int,
  created_at: Timestamp
})
export const ProofFailedData = Schema.Struct({
  proof_id: ProofId,
  circuit: Schema.String,
  proving_system: ProvingSystem,
  status: Schema.Literal("failed"),
  error: ProofError,
  public_inputs: PublicInputs,
  duration_ms: Schema.Int,
  created_at: Timestamp
})
export const ProofExpiredData = Schema.Struct({
  proof_id: ProofId,
  circuit: Schema.String,
  status: Schema.Literal("expired"),
  created_at: Timestamp,
  expired_at: Timestamp
})
export const ProofCanceledData = Schema.Struct({
  proof_id: ProofId,
  circuit: Schema.String,
  status: Schema.Literal("canceled"),
  canceled_at: Timestamp,
  created_at: Timestamp
})
export const ProofVerifiedData = Schema.Struct({
  proof_id: ProofId,
  circuit: Schema.String,
  proving_system: ProvingSystem,
  valid: Schema.Boolean,
  verified_at: Timestamp
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
  /** The system the proof is (to be) made with: the circuit's own, or one a built-in circuit also has. */
  readonly proving_system: ProvingSystem
  readonly status: ProofStatus
  readonly inputs: CircuitInputs | null
  readonly public_inputs: Readonly<Record<string, string>>
  readonly proof_blob: string | null
  readonly error: ProofError | null
  readonly duration_ms: number | null
  readonly attempts: number
  /** While running: when the claim lapses and another worker may take the proof over. */
  readonly lease_expires_at: Timestamp | null
  readonly created_at: Timestamp
  readonly started_at: Timestamp | null
  readonly completed_at: Timestamp | null
  /** When it was canceled; null unless `canceled`. */
  readonly canceled_at: Timestamp | null
  readonly expires_at: Timestamp | null
}
export type ProofError = typeof ProofError.Type

export const toProof = (record: ProofRecord): Proof => ({
  proof_id: record.id,
  type: record.type,
  circuit: record.circuit,
  proving_system: record.proving_system,
  status: record.status,
  public_inputs: record.public_inputs,
  proof_blob: record.proof_blob,
  error: record.error,
  duration_ms: record.duration_ms,
  created_at: record.created_at,
  started_at: record.started_at,
  completed_at: record.completed_at,
  canceled_at: record.canceled_at,
  expires_at: record.expires_at
})

/** A batch create's response. */
export const ProofBatch = Schema.Struct({
  batch_id: BatchId,
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
