import { Schema } from "effect"
import { AccountId, KeyId } from "../kernel/ids.js"
import { MetadataField, MetadataInput } from "../kernel/metadata.js"
import { Scope } from "../kernel/scopes.js"
import { StoredText } from "../kernel/text.js"
import { Timestamp } from "../kernel/time.js"

export const KeyName = Schema.String.pipe(
  Schema.minLength(1, { message: () => "name is required" }),
  Schema.maxLength(64, { message: () => "name must be at most 64 characters" }),
  Schema.pattern(/^[A-Za-z0-9-]+$/, { message: () => "name may hold only letters, digits and hyphens" })
)
export const KeyDescription = StoredText.pipe(
  Schema.maxLength(1024, { message: () => "description must be at most 1024 characters" })
)

/** The body of a key create request. */
export const CreateKeyInput = Schema.Struct({
  name: KeyName,
  description: Schema.optionalWith(Schema.NullOr(KeyDescription), { exact: true }),
  scopes: Schema.optionalWith(
    Schema.Array(Scope).pipe(Schema.minItems(1, { message: () => "scopes must not be empty" })).annotations({
      description: "What the key may do; default: every scope. A key never grants a scope its creator lacks"
    }),
    { exact: true }
  ),
  expires_at: Schema.optionalWith(
    Schema.NullOr(Timestamp.annotations({ description: "When the key stops working (ISO 8601 UTC, in the future); absent or null: never" })),
    { exact: true }
  ),
  metadata: Schema.optionalWith(MetadataInput, { exact: true })
}).annotations({ identifier: "CreateKeyInput" })
export type CreateKeyInput = typeof CreateKeyInput.Type

/** A key as clients see it: never the raw key, never its hash. */
export const ApiKey = Schema.Struct({
  id: KeyId,
  name: Schema.String,
  description: Schema.NullOr(Schema.String),
  prefix: Schema.String.annotations({ description: "The first characters of the key, for recognising it" }),
  scopes: Schema.Array(Scope),
  created_at: Timestamp,
  last_used_at: Schema.NullOr(Timestamp),
  expires_at: Schema.NullOr(Timestamp).annotations({
    description: "When the key stops working (set at creation, or by a roll: the end of its overlap); null: never"
  }),
  metadata: MetadataField.annotations({ description: "Your own key-value pairs, set at creation; a roll's new key keeps them" })
}).annotations({ identifier: "ApiKey" })
export type ApiKey = typeof ApiKey.Type

/** A key as storage holds it. */
export interface ApiKeyRecord extends ApiKey {
  readonly account_id: AccountId
  readonly hash: string
  readonly revoked_at: Timestamp | null
  /** The key a roll made to replace this one; a key is rolled at most once. */
  readonly replaced_by: KeyId | null
}

export const toApiKey = (record: ApiKeyRecord): ApiKey => ({
  id: record.id,
  name: record.name,
  description: record.description,
  prefix: record.prefix,
  scopes: record.scopes,
  created_at: record.created_at,
  last_used_at: record.last_used_at,
  expires_at: record.expires_at,
  metadata: record.metadata
})

/** A key works until it is revoked or its `expires_at` has come. */
export const isActiveKey = (key: Pick<ApiKeyRecord, "revoked_at" | "expires_at">, now: string): boolean =>
  key.revoked_at === null && (key.expires_at === null || key.expires_at > now)

/** Longest overlap a roll may give the old key: 30 days, as long as anyone should run two keys. */
export const MAX_ROLL_OVERLAP_SECONDS = 30 * 86_400

/** The body of a key roll request. */
export const RollKeyInput = Schema.Struct({
  expires_in: Schema.optionalWith(
    Schema.Int.pipe(
      Schema.between(0, MAX_ROLL_OVERLAP_SECONDS, { message: () => `expires_in must be whole seconds from 0 to ${MAX_ROLL_OVERLAP_SECONDS}` })
    ).annotations({ description: "Seconds the old key keeps working (default 86400, 24 h; 0 stops it now)" }),
    { exact: true }
  ),
  expires_at: Schema.optionalWith(
    Schema.NullOr(Timestamp.annotations({
      description: "When the new key stops working (ISO 8601 UTC, in the future); null: never. Absent: the old key's own `expires_at`, " +
        "so a roll replaces a key's secret, not its term"
    })),
    { exact: true }
  )
}).annotations({ identifier: "RollKeyInput" })
export type RollKeyInput = typeof RollKeyInput.Type

export const DEFAULT_ROLL_OVERLAP_SECONDS = 86_400

/** `data` of `key.created`: never the raw key. */
export const KeyCreatedData = Schema.Struct({
  id: KeyId,
  name: Schema.String,
  description: Schema.NullOr(Schema.String),
  scopes: Schema.Array(Scope),
  created_at: Timestamp,
  metadata: MetadataField
})
export const KeyRevokedData = Schema.Struct({ id: KeyId, name: Schema.String, revoked_at: Timestamp, metadata: MetadataField })
/** `data` of `key.rolled`: the new key (never its raw value) and when the old one stops working. */
export const KeyRolledData = Schema.Struct({
  id: KeyId,
  name: Schema.String,
  scopes: Schema.Array(Scope),
  created_at: Timestamp,
  previous_key_id: KeyId,
  previous_key_expires_at: Timestamp,
  metadata: MetadataField
})
