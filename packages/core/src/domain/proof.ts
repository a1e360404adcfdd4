import { Schema } from "effect"
import { ProofId } from "../ids.js"
import { Timestamp } from "../time.js"

export const PROOF_STATUSES = ["queued", "running", "completed", "failed", "expired"] as const
export const ProofStatus = Schema.Literal(...PROOF_STATUSES).annotations({ identifier: "ProofStatus" })
export type ProofStatus = typeof ProofStatus.Type

export const ProofErrorCode = Schema.Literal("constraint_violation", "invalid_inputs", "timeout", "internal")
export type ProofErrorCode = typeof ProofErrorCode.Type
export const ProofError = Schema.Struct({ code: ProofErrorCode, message: Schema.String })

/** Public signal names → decimal strings (field elements do not fit a JSON number). */
export const PublicInputs = Schema.Record({ key: Schema.String, value: Schema.String })

/** Input values: integers as JSON numbers or decimal strings; arrays for array inputs. */
export const ProofInputValue = Schema.Union(Schema.String, Schema.Number, Schema.Array(Schema.Union(Schema.String, Schema.Number)))
export const CreateProofInput = Schema.Struct({
  type: Schema.String,
  inputs: Schema.Record({ key: Schema.String, value: ProofInputValue })
}).annotations({ identifier: "CreateProofInput" })
export type CreateProofInput = typeof CreateProofInput.Type

export const Proof = Schema.Struct({
  proof_id: ProofId,
  type: Schema.String,
  circuit: Schema.String,
  status: ProofStatus,
  public_inputs: PublicInputs,
  proof_blob: Schema.NullOr(Schema.String).annotations({ description: "base64 of the snarkjs proof JSON" }),
  error: Schema.NullOr(ProofError),
  duration_ms: Schema.NullOr(Schema.Int),
  created_at: Timestamp,
  started_at: Schema.NullOr(Timestamp),
  completed_at: Schema.NullOr(Timestamp),
  expires_at: Schema.NullOr(Timestamp)
}).annotations({ identifier: "Proof" })
export type Proof = typeof Proof.Type

/** `data` of each proof event (spec 2.4 and DESIGN §3). */
export const ProofCompletedData = Schema.Struct({
  proof_id: ProofId,
  circuit: Schema.String,
  status: Schema.Literal("completed"),
  proof_blob: Schema.String,
  public_inputs: PublicInputs,
  duration_ms: Schema.Int,
  created_at: Timestamp
})
export const ProofFailedData = Schema.Struct({
  proof_id: ProofId,
  circuit: Schema.String,
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
export const ProofVerifiedData = Schema.Struct({
  proof_id: ProofId,
  circuit: Schema.String,
  valid: Schema.Boolean,
  verified_at: Timestamp
})
