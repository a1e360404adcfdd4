import { Schema } from "effect"
import { AccountId, ProofId, VerificationKeyId } from "../kernel/ids.js"
import { pageQuery } from "../kernel/paging.js"
import { ProvingSystem } from "../kernel/provingSystem.js"
import { TextWithoutControls } from "../kernel/text.js"
import { Timestamp } from "../kernel/time.js"

/**
 * A JSON object as another tool wrote it (snarkjs's `verification_key.json`, `proof.json`): kept
 * as sent, its shape checked by the proving system's own module (the `Verifier`), which names the
 * field at fault.
 */
export const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
  identifier: "JsonObject",
  // Described as a plain object, as an event's `data` is: its fields are the proving system's.
  jsonSchema: { type: "object", description: "A JSON object, in the proving system's own format (snarkjs JSON for groth16, plonk and fflonk)" }
})
export type JsonObject = typeof JsonObject.Type

export const VerificationKeyName = TextWithoutControls.pipe(
  Schema.minLength(1, { message: () => "name must not be empty" }),
  Schema.maxLength(64, { message: () => "name must be at most 64 characters" })
)

/** A registered verification key, as stored. */
export interface VerificationKeyRecord {
  readonly id: VerificationKeyId
  readonly account_id: AccountId
  readonly name: string | null
  readonly proving_system: ProvingSystem
  readonly n_public: number
  readonly verification_key: JsonObject
  readonly created_at: Timestamp
}

export const VerificationKey = Schema.Struct({
  id: VerificationKeyId,
  name: Schema.NullOr(Schema.String),
  proving_system: ProvingSystem,
  n_public: Schema.Int.annotations({ description: "How many public signals a proof checked with this key carries" }),
  verification_key: JsonObject,
  created_at: Timestamp
}).annotations({ identifier: "VerificationKey" })
export type VerificationKey = typeof VerificationKey.Type

export const toVerificationKey = ({ account_id: _, ...record }: VerificationKeyRecord): VerificationKey => record

export const CreateVerificationKeyInput = Schema.Struct({
  proving_system: ProvingSystem,
  verification_key: JsonObject,
  name: Schema.optionalWith(VerificationKeyName, { exact: true })
}).annotations({ identifier: "CreateVerificationKeyInput" })
export type CreateVerificationKeyInput = typeof CreateVerificationKeyInput.Type

// No identifier: the OpenAPI document lists a query's fields as parameters only when it is not a named schema.
export const ListVerificationKeysQuery = pageQuery(VerificationKeyId)
export type ListVerificationKeysQuery = typeof ListVerificationKeysQuery.Type

/** A decimal string, as snarkjs writes field elements (checked against the field by the Verifier). */
const DecimalString = Schema.String.pipe(
  Schema.pattern(/^(0|[1-9][0-9]{0,77})$/, { message: () => "must be a decimal string without leading zeros (a field element)" })
)

/**
 * `POST /verifications`: a proof with its public signals, checked against exactly one of a key
 * sent inline, a registered key (its id) or a circuit (its key).
 */
export const CreateVerificationInput = Schema.Struct({
  proving_system: ProvingSystem,
  verification_key: Schema.optionalWith(JsonObject, { exact: true }),
  verification_key_id: Schema.optionalWith(Schema.String, { exact: true }),
  circuit: Schema.optionalWith(Schema.String, { exact: true }).annotations({
    description: "A circuit the account can prove with (its own, ready, or a built-in one): its verification key is used. " +
      "As a proof's `type`: `name` is its newest ready version, `name@N` exactly version N"
  }),
  proof: JsonObject,
  public_signals: Schema.Array(DecimalString).pipe(Schema.maxItems(10_000)).annotations({
    description: "The public signals in the circuit's order, as decimal strings"
  })
}).annotations({ identifier: "CreateVerificationInput" })
export type CreateVerificationInput = typeof CreateVerificationInput.Type

export const Verification = Schema.Struct({
  valid: Schema.Boolean.annotations({ description: "Whether the proof is valid for the key and public signals; a false is an answer, not an error" }),
  proving_system: ProvingSystem,
  verification_key_id: Schema.NullOr(VerificationKeyId).annotations({ description: "The registered key used, if one was named" }),
  circuit: Schema.NullOr(Schema.String).annotations({ description: "The circuit whose key was used, if one was named" }),
  proof_id: Schema.NullOr(ProofId).annotations({
    description: "The account's own proof this is, when mzk made it for this account (then `proof.verified` is recorded too); null for proofs made elsewhere"
  }),
  public_signals: Schema.Int.annotations({ description: "How many public signals were checked" }),
  verified_at: Timestamp
}).annotations({ identifier: "Verification" })
export type Verification = typeof Verification.Type
