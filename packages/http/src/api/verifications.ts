import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { CreateVerificationInput, CreateVerificationKeyInput, ListVerificationKeysQuery, Verification, VerificationKey } from "@mzk/core"
import { Schema } from "effect"
import { Authentication, idempotent, metered, requires } from "./annotations.js"
import { CircuitNotReadyWire, VerificationKeyLimitReachedWire, VerificationKeyNotFoundWire } from "./errors.js"
import { strictBody } from "./request.js"

export const VerificationKeyList = Schema.Struct({
  verification_keys: Schema.Array(VerificationKey),
  total: Schema.Int,
  has_more: Schema.Boolean
}).annotations({ identifier: "VerificationKeyList" })

const verificationKeyId = HttpApiSchema.param("id", Schema.String)

/** What the 400s of a verification name, said once for both endpoints that check a key. */
const CHECKED =
  "Every field is checked before any pairing is computed: shape, `protocol` and `curve` names, canonical field elements, " +
  "points on the curve (G2 points also in their subgroup) and the count of public signals; each problem is a 400 " +
  "`invalid_request` whose `details[].path` names the field (`proof.pi_a`, `verification_key.vk_delta_2`, `public_signals`). " +
  "The point at infinity is written as snarkjs writes it, `[\"0\", \"1\", \"0\"]` (G2: " +
  "`[[\"0\", \"0\"], [\"1\", \"0\"], [\"0\", \"0\"]]`), and taken wherever a correct setup or prover can put one: any " +
  "point of a proof, Groth16's `IC`, PLONK's `Qm` to `S3` (`Qc` of every circuit without constant terms), FFLONK's `C0`; " +
  "as Groth16's `vk_alpha_1`, `vk_beta_2`, `vk_gamma_2`, `vk_delta_2` or a key's `X_2` it is a 400 (the setup's secret " +
  "is never 0). An affine `(0, 0)` is on neither curve: a 400."

export class VerificationsGroup extends HttpApiGroup.make("verifications")
  .add(
    HttpApiEndpoint.post("create", "/verifications")
      .setPayload(strictBody(CreateVerificationInput))
      .addSuccess(Verification)
      .addError(CircuitNotReadyWire)
      .pipe(metered, requires("proofs:verify"), idempotent)
      .annotate(
        OpenApi.Description,
        "Verify a proof made anywhere, synchronously: `proving_system` (`groth16`, `plonk`, `fflonk`: snarkjs JSON; `ultra_honk`: " +
          "bb.js's key and proof as 0x-hex, on a server with an UltraHonk CRS), the proof, " +
          "its `public_signals`, and exactly one of `verification_key` (inline), `verification_key_id` (registered with " +
          "POST /verification-keys) or `circuit` (a circuit's key). A proof that does not hold is 200 with `valid: false`, " +
          "not an error. " + CHECKED + " Metered as a proof request (the key's minute and the account's day, no proof " +
          "units). When the proof is one mzk made for this account, `proof_id` names it and `proof.verified` is recorded; " +
          "proofs made elsewhere record no event."
      )
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Verifications") {}

export class VerificationKeysGroup extends HttpApiGroup.make("verificationKeys")
  .add(
    HttpApiEndpoint.post("create", "/verification-keys")
      .setPayload(strictBody(CreateVerificationKeyInput))
      .addSuccess(VerificationKey, { status: 201 })
      .addError(VerificationKeyLimitReachedWire)
      .pipe(metered, requires("proofs:verify"), idempotent)
      .annotate(
        OpenApi.Description,
        "Register a verification key once, to name it by id in POST /verifications. " + CHECKED + " An account holds at " +
          "most 50 keys (409 `verification_key_limit_reached`; `mzk serve --max-verification-keys-per-account`). Metered as " +
          "a proof request (the key's minute and the account's day, no proof units)."
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/verification-keys")
      .setUrlParams(ListVerificationKeysQuery)
      .addSuccess(VerificationKeyList)
      .pipe(requires("proofs:verify"))
      .annotate(
        OpenApi.Description,
        "The account's registered verification keys, newest first, paged as every list: `limit`, `starting_after` " +
          "(older keys) or `ending_before` (newer ones), each cursor a key's `id`."
      )
  )
  .add(
    HttpApiEndpoint.get("get")`/verification-keys/${verificationKeyId}`
      .addSuccess(VerificationKey)
      .addError(VerificationKeyNotFoundWire)
      .pipe(requires("proofs:verify"))
      .annotate(OpenApi.Description, "One registered verification key.")
  )
  .add(
    HttpApiEndpoint.del("remove")`/verification-keys/${verificationKeyId}`
      .addSuccess(HttpApiSchema.NoContent)
      .addError(VerificationKeyNotFoundWire)
      .pipe(requires("proofs:verify"))
      .annotate(OpenApi.Description, "Delete a registered verification key; verifications naming it are refused from then on.")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Verification keys") {}
