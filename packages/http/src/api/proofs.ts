import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { CreateProofBatchInput, CreateProofInput, ListProofsQuery, Proof, ProofBatch, ProofVerification } from "@mzk/core"
import { Schema } from "effect"
import { Authentication, metered, requires } from "./annotations.js"
import { ProofNotFoundWire, ProofNotReadyWire } from "./errors.js"
import { strictBody } from "./request.js"

export const ProofList = Schema.Struct({ proofs: Schema.Array(Proof), total: Schema.Int, has_more: Schema.Boolean })
  .annotations({ identifier: "ProofList" })

const proofId = HttpApiSchema.param("id", Schema.String)

export class ProofsGroup extends HttpApiGroup.make("proofs")
  .add(
    HttpApiEndpoint.post("create", "/proofs")
      .setPayload(strictBody(CreateProofInput))
      .addSuccess(Proof, { status: 202 })
      .pipe(metered, requires("proofs:write"))
      .annotate(
        OpenApi.Description,
        "Queue a proof of `type` over `inputs` (integers as numbers or decimal strings). Inputs are checked before anything is queued."
      )
  )
  .add(
    HttpApiEndpoint.post("createBatch", "/proofs/batch")
      .setPayload(strictBody(CreateProofBatchInput))
      .addSuccess(ProofBatch, { status: 202 })
      .pipe(metered, requires("proofs:write"))
      .annotate(
        OpenApi.Description,
        "Queue 1 to 100 proofs, all or none; `details[].path` names the failing item. Counts its size against the daily quota."
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/proofs")
      .setUrlParams(ListProofsQuery)
      .addSuccess(ProofList)
      .pipe(requires("proofs:read"))
      .annotate(OpenApi.Description, "The account's proofs, oldest first, optionally by `status`.")
  )
  .add(
    HttpApiEndpoint.get("get")`/proofs/${proofId}`
      .addSuccess(Proof)
      .addError(ProofNotFoundWire)
      .pipe(requires("proofs:read"))
      .annotate(OpenApi.Description, "One proof; `proof_blob` is base64 of the snarkjs proof JSON once completed.")
  )
  .add(
    HttpApiEndpoint.get("verify")`/proofs/${proofId}/verify`
      .addSuccess(ProofVerification)
      .addError(ProofNotFoundWire)
      .addError(ProofNotReadyWire)
      .pipe(metered, requires("proofs:read"))
      .annotate(OpenApi.Description, "Verify a completed proof against its circuit's verification key; fires proof.verified.")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Proofs")
{}
