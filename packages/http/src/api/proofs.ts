import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { CreateProofBatchInput, CreateProofInput, ListProofsQuery, Proof, ProofBatch, ProofBatchCancellation, ProofVerification } from "@mzk/core"
import { Schema } from "effect"
import { Authentication, idempotent, metered, QueryPrefixes, requires } from "./annotations.js"
import { BatchNotFoundWire, CircuitNotReadyWire, ProofNotCancelableWire, ProofNotFoundWire, ProofNotReadyWire } from "./errors.js"
import { strictBody } from "./request.js"

export const ProofList = Schema.Struct({ proofs: Schema.Array(Proof), total: Schema.Int, has_more: Schema.Boolean })
  .annotations({ identifier: "ProofList" })

const proofId = HttpApiSchema.param("id", Schema.String)
const batchId = HttpApiSchema.param("batch_id", Schema.String)

const Uint256 = Schema.String.pipe(Schema.pattern(/^(0|[1-9][0-9]*)$/)).annotations({ description: "A uint256 as a decimal string" })

/** A completed proof as the arguments of its circuit's Solidity verifier (`GET /circuits/{name}/verifier.sol`). */
export const ProofCalldata = Schema.Struct({
  function: Schema.String.annotations({
    description: "The verifier's function. Groth16: `verifyProof(uint256[2],uint256[2][2],uint256[2],uint256[N])`; PLONK: " +
      "`verifyProof(uint256[24],uint256[N])`; FFLONK: `verifyProof(bytes32[24],uint256[N])`; N the public signals"
  }),
  arguments: Schema.Union(
    Schema.Tuple(
      Schema.Array(Uint256).annotations({ description: "a" }),
      Schema.Array(Schema.Array(Uint256)).annotations({ description: "b, each pair in the order the EVM pairing precompile takes" }),
      Schema.Array(Uint256).annotations({ description: "c" }),
      Schema.Array(Uint256).annotations({ description: "the public signals, in the circuit's `public_signals` order" })
    ).annotations({ description: "Groth16: a, b, c, the public signals" }),
    Schema.Tuple(
      Schema.Array(Uint256).annotations({ description: "the proof's 24 words, in the order snarkjs's verifier reads them" }),
      Schema.Array(Uint256).annotations({ description: "the public signals, in the circuit's `public_signals` order" })
    ).annotations({ description: "PLONK and FFLONK: the proof, the public signals" }),
    Schema.Tuple(
      Schema.String.pipe(Schema.pattern(/^0x[0-9a-f]*$/)).annotations({ description: "the proof's bytes, 0x-hex" }),
      Schema.Array(Schema.String.pipe(Schema.pattern(/^0x[0-9a-f]{64}$/))).annotations({
        description: "the public signals as bytes32 words, in the circuit's `public_signals` order"
      })
    ).annotations({ description: "UltraHonk: `verify(bytes,bytes32[])` of bb.js's HonkVerifier: the proof, the public inputs" })
  ),
  calldata: Schema.String.pipe(Schema.pattern(/^0x[0-9a-f]*$/)).annotations({
    description: "The ABI-encoded call (selector and arguments), ready to send to the verifier contract"
  })
}).annotations({ identifier: "ProofCalldata" })

export class ProofsGroup extends HttpApiGroup.make("proofs")
  .add(
    HttpApiEndpoint.post("create", "/proofs")
      .setPayload(strictBody(CreateProofInput))
      .addSuccess(Proof, { status: 202 })
      .addError(CircuitNotReadyWire)
      .pipe(metered, requires("proofs:write"), idempotent)
      .annotate(
        OpenApi.Description,
        "Queue a proof of `type` (a circuit the account can see: built in, or its own once ready) over `inputs` (integers as numbers or decimal strings, nested arrays for array inputs). Inputs are checked before anything is queued."
      )
  )
  .add(
    HttpApiEndpoint.post("createBatch", "/proofs/batch")
      .setPayload(strictBody(CreateProofBatchInput))
      .addSuccess(ProofBatch, { status: 202 })
      .addError(CircuitNotReadyWire)
      .pipe(metered, requires("proofs:write"), idempotent)
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
      .annotate(QueryPrefixes, ["metadata"])
      .annotate(OpenApi.Description, "The account's proofs, newest first, optionally by `status` and by metadata: `metadata[<key>]=<value>` keeps the proofs whose metadata holds that pair (exact match; several pairs must all hold); `starting_after` pages on to older ones, `ending_before` back to newer ones.")
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
  .add(
    HttpApiEndpoint.get("calldata")`/proofs/${proofId}/calldata`
      .addSuccess(ProofCalldata)
      .addError(ProofNotFoundWire)
      .addError(ProofNotReadyWire)
      .pipe(requires("proofs:read"))
      .annotate(
        OpenApi.Description,
        "A completed proof as the call of its circuit's Solidity verifier: the function, its arguments and the ABI-encoded calldata."
      )
  )
  .add(
    HttpApiEndpoint.post("cancel")`/proofs/${proofId}/cancel`
      .addSuccess(Proof)
      .addError(ProofNotFoundWire)
      .addError(ProofNotCancelableWire)
      .pipe(requires("proofs:write"), idempotent)
      .annotate(
        OpenApi.Description,
        "Cancel a queued or running proof; no body. It is `canceled` at once, with `canceled_at`: a queued proof is never " +
          "proven, a running one is stopped (its prover thread is freed for other proofs). Its private inputs are dropped, its " +
          "unit of the daily quota is given back (if it was charged today, UTC; the key's request a minute is not), " +
          "`proof.canceled` fires, and it expires with the retention period like a settled proof. A completed, failed, " +
          "canceled or expired proof is 409 `proof_not_cancelable`."
      )
  )
  .add(
    HttpApiEndpoint.post("cancelBatch")`/proofs/batch/${batchId}/cancel`
      .addSuccess(ProofBatchCancellation)
      .addError(BatchNotFoundWire)
      .pipe(requires("proofs:write"), idempotent)
      .annotate(
        OpenApi.Description,
        "Cancel every queued or running proof of a batch (`POST /proofs/batch`), in one transaction, as " +
          "`POST /proofs/{id}/cancel` cancels one; no body. Answers with the batch's proofs as they stand and `canceled_count`. " +
          "A batch with nothing left to cancel (every proof settled) answers 200 with `canceled_count: 0`, not an error, " +
          "so a retry or a cancel racing the batch's last proofs succeeds."
      )
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Proofs")
{}
