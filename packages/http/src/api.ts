import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpApiSchema, HttpApiSecurity, OpenApi } from "@effect/platform"
import { ApiKey, CreateKeyInput, type Principal } from "@mzk/core"
import { Context, Schema } from "effect"
import {
  InsufficientScopeWire,
  InternalErrorWire,
  InvalidApiKeyWire,
  InvalidRequestWire,
  KeyLimitReachedWire,
  KeyNotFoundWire,
  MethodNotAllowedWire,
  NotFoundWire,
  PayloadTooLargeWire,
  StorageErrorWire,
  UnsupportedMediaTypeWire
} from "./errors.js"

/** Request bodies refuse unknown fields and report every problem, not just the first. */
const strictBody = { parseOptions: { onExcessProperty: "error", errors: "all" } } as const

export class CurrentPrincipal extends Context.Tag("@mzk/http/CurrentPrincipal")<CurrentPrincipal, Principal>() {}

export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("@mzk/http/Authentication", {
  failure: Schema.Union(InvalidApiKeyWire, StorageErrorWire),
  provides: CurrentPrincipal,
  security: { bearer: HttpApiSecurity.bearer }
}) {}

export const CreatedApiKey = Schema.Struct({
  ...ApiKey.fields,
  key: Schema.String.annotations({ description: "The raw key (`mzk_…`). Returned only here, never again." })
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
      .setPayload(CreateKeyInput.annotations(strictBody))
      .addSuccess(CreatedApiKey, { status: 201 })
      .addError(InsufficientScopeWire)
      .addError(KeyLimitReachedWire)
      .annotate(OpenApi.Description, "Create an API key. The raw key is in this response only. Scope: keys:write.")
  )
  .add(
    HttpApiEndpoint.get("list", "/keys")
      .addSuccess(ApiKeyList)
      .addError(InsufficientScopeWire)
      .annotate(OpenApi.Description, "List the account's active keys, without their secrets. Scope: keys:read.")
  )
  .add(
    HttpApiEndpoint.del("revoke")`/keys/${keyId}`
      .addSuccess(HttpApiSchema.NoContent)
      .addError(KeyNotFoundWire)
      .addError(InsufficientScopeWire)
      .annotate(OpenApi.Description, "Revoke a key, permanently. Scope: keys:write.")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "API keys")
{}

export class MzkApi extends HttpApi.make("mzk")
  .add(KeysGroup)
  .prefix("/api/v1")
  .addError(InvalidRequestWire)
  .addError(PayloadTooLargeWire)
  .addError(UnsupportedMediaTypeWire)
  .addError(StorageErrorWire)
  .addError(InternalErrorWire)
  .annotate(OpenApi.Title, "mzk proof service API")
  .annotate(OpenApi.Version, "1.0.0")
  .annotate(OpenApi.Description, "Groth16 proofs as a service: API keys, webhooks, proofs. Every error has the body {\"error\": {\"code\", \"message\", \"request_id\"}}.")
{}

/** Errors only the request middleware produces, listed for the document and the client. */
export const RouteErrors = { NotFoundWire, MethodNotAllowedWire }
