import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { ApiKey, CreateKeyInput, RollKeyInput } from "@mzk/core"
import { Schema } from "effect"
import { Authentication, idempotent, ReplayWithout, requires } from "./annotations.js"
import { KeyAlreadyRolledWire, KeyLimitReachedWire, KeyNotFoundWire } from "./errors.js"
import { strictBody } from "./request.js"

export const CreatedApiKey = Schema.Struct({
  ...ApiKey.fields,
  key: Schema.NullOr(Schema.String).annotations({
    description: "The raw key (`mzk_…`). Returned only here, never again: null when this response is the replay of an " +
      "earlier request with the same Idempotency-Key, since mzk never stores raw keys (revoke that key and create another)."
  })
}).annotations({ identifier: "CreatedApiKey" })

export const ApiKeyList = Schema.Struct({
  keys: Schema.Array(ApiKey),
  total: Schema.Int,
  limit: Schema.Int.annotations({ description: "Active keys an account may hold (10)" })
}).annotations({ identifier: "ApiKeyList" })

const keyId = HttpApiSchema.param("id", Schema.String)

export class KeysGroup extends HttpApiGroup.make("keys")
  .add(
    HttpApiEndpoint.post("create", "/keys")
      .setPayload(strictBody(CreateKeyInput))
      .addSuccess(CreatedApiKey, { status: 201 })
      .addError(KeyLimitReachedWire)
      .pipe(requires("keys:write"), idempotent)
      .annotate(ReplayWithout, ["key"])
      .annotate(OpenApi.Description, "Create an API key, optionally expiring at `expires_at`. The raw key is in this response only.")
  )
  .add(
    HttpApiEndpoint.get("list", "/keys")
      .addSuccess(ApiKeyList)
      .pipe(requires("keys:read"))
      .annotate(OpenApi.Description, "List the account's active keys, without their secrets.")
  )
  .add(
    HttpApiEndpoint.del("revoke")`/keys/${keyId}`
      .addSuccess(HttpApiSchema.NoContent)
      .addError(KeyNotFoundWire)
      .pipe(requires("keys:write"))
      .annotate(OpenApi.Description, "Revoke a key, permanently.")
  )
  .add(
    HttpApiEndpoint.post("roll")`/keys/${keyId}/roll`
      .setPayload(strictBody(RollKeyInput))
      .addSuccess(CreatedApiKey, { status: 201 })
      .addError(KeyNotFoundWire)
      .addError(KeyAlreadyRolledWire)
      .addError(KeyLimitReachedWire)
      .pipe(requires("keys:write"), idempotent)
      .annotate(ReplayWithout, ["key"])
      .annotate(
        OpenApi.Description,
        "Roll a key without downtime: a new key with the same name, description, scopes and `expires_at` (its raw value in this " +
          "response only; `expires_at` in the body sets the new key's end instead, null for none), while the old one keeps working " +
          "for `expires_in` seconds (default 86400; 0 stops it now, and a key that expires sooner keeps its own end) and then gets 401. " +
          "The old key counts toward the 10 active keys until it stops working. A key is rolled once: rolling it again while it still " +
          "works is 409 `key_already_rolled` (roll its successor, or revoke it to stop it now). Fires `key.rolled`."
      )
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "API keys")
{}
