import { Schema } from "effect"
import { AccountId, KeyId } from "../kernel/ids.js"
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
    Schema.Array(Scope).pipe(Schema.minItems(1, { message: () => "scopes must not be empty" })),
    { exact: true }
  )
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
  last_used_at: Schema.NullOr(Timestamp)
}).annotations({ identifier: "ApiKey" })
export type ApiKey = typeof ApiKey.Type

/** A key as storage holds it. */
export interface ApiKeyRecord extends ApiKey {
  readonly account_id: AccountId
  readonly hash: string
  readonly revoked_at: Timestamp | null
}

export const toApiKey = (record: ApiKeyRecord): ApiKey => ({
  id: record.id,
  name: record.name,
  description: record.description,
  prefix: record.prefix,
  scopes: record.scopes,
  created_at: record.created_at,
  last_used_at: record.last_used_at
})

/** `data` of `key.created`: never the raw key. */
export const KeyCreatedData = Schema.Struct({
  id: KeyId,
  name: Schema.String,
  description: Schema.NullOr(Schema.String),
  scopes: Schema.Array(Scope),
  created_at: Timestamp
})
export const KeyRevokedData = Schema.Struct({ id: KeyId, name: Schema.String, revoked_at: Timestamp })
