import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpApiSchema, HttpApiSecurity, OpenApi } from "@effect/platform"
import {
  ApiKey,
  CreateKeyInput,
  CreateProofInput,
  CreateWebhookInput,
  DeliveryAttempt,
  DeliveryAttemptId,
  Proof,
  ProofBatch,
  ProofId,
  ProofStatus,
  ProofVerification,
  UpdateWebhookInput,
  Webhook,
  WebhookId
} from "@mzk/core"
import { Schema } from "effect"
import {
  InsufficientScopeWire,
  InternalErrorWire,
  InvalidApiKeyWire,
  InvalidRequestWire,
  KeyLimitReachedWire,
  KeyNotFoundWire,
  InvalidWebhookUrlWire,
  MethodNotAllowedWire,
  NotFoundWire,
  PayloadTooLargeWire,
  ProofNotFoundWire,
  ProofNotReadyWire,
  RateLimitExceededWire,
  WebhookLimitReachedWire,
  WebhookNotFoundWire,
  StorageErrorWire,
  UnsupportedMediaTypeWire
} from "./errors.js"

/** Request bodies refuse unknown fields and report every problem, not just the first. */
const strictBody = { parseOptions: { onExcessProperty: "error", errors: "all" } } as const

export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("@mzk/http/Authentication", {
  failure: Schema.Union(InvalidApiKeyWire, StorageErrorWire),
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

/**
 * Cursor paging of every list: `?limit=` (1–100, default 20) and `?starting_after=<id>`, an id of
 * the kind the list holds; anything else is 400 (a NUL there reached Postgres, which answered 503).
 */
const paging = <Id extends string>(cursor: Schema.Schema<Id, string>) => ({
  limit: Schema.optionalWith(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 100)), { exact: true }),
  starting_after: Schema.optionalWith(cursor, { exact: true })
})

export const CreatedWebhook = Schema.Struct({
  ...Webhook.fields,
  secret: Schema.String.annotations({ description: "The signing secret (`whsec_…`). Returned only here, never again." })
}).annotations({ identifier: "CreatedWebhook" })

export const WebhookList = Schema.Struct({ webhooks: Schema.Array(Webhook), total: Schema.Int, has_more: Schema.Boolean })
  .annotations({ identifier: "WebhookList" })
export const DeliveryAttemptList = Schema.Struct({ deliveries: Schema.Array(DeliveryAttempt), total: Schema.Int, has_more: Schema.Boolean })
  .annotations({ identifier: "DeliveryAttemptList" })

const webhookId = HttpApiSchema.param("id", Schema.String)

export class WebhooksGroup extends HttpApiGroup.make("webhooks")
  .add(
    HttpApiEndpoint.post("create", "/webhooks")
      .setPayload(CreateWebhookInput.annotations(strictBody))
      .addSuccess(CreatedWebhook, { status: 201 })
      .addError(InvalidWebhookUrlWire)
      .addError(WebhookLimitReachedWire)
      .addError(InsufficientScopeWire)
      .annotate(OpenApi.Description, "Register an HTTPS endpoint for events. The signing secret is in this response only. Scope: webhooks:write.")
  )
  .add(
    HttpApiEndpoint.get("list", "/webhooks")
      .setUrlParams(Schema.Struct(paging(WebhookId)))
      .addSuccess(WebhookList)
      .addError(InsufficientScopeWire)
      .annotate(OpenApi.Description, "List the account's webhooks, oldest first. Scope: webhooks:read.")
  )
  .add(
    HttpApiEndpoint.get("get")`/webhooks/${webhookId}`
      .addSuccess(Webhook)
      .addError(WebhookNotFoundWire)
      .addError(InsufficientScopeWire)
      .annotate(OpenApi.Description, "One webhook. Scope: webhooks:read.")
  )
  .add(
    HttpApiEndpoint.patch("update")`/webhooks/${webhookId}`
      .setPayload(UpdateWebhookInput.annotations(strictBody))
      .addSuccess(Webhook)
      .addError(InvalidWebhookUrlWire)
      .addError(WebhookNotFoundWire)
      .addError(InsufficientScopeWire)
      .annotate(OpenApi.Description, "Change url, events, description or active; `active: true` re-enables a disabled webhook. Scope: webhooks:write.")
  )
  .add(
    HttpApiEndpoint.del("remove")`/webhooks/${webhookId}`
      .addSuccess(HttpApiSchema.NoContent)
      .addError(WebhookNotFoundWire)
      .addError(InsufficientScopeWire)
      .annotate(OpenApi.Description, "Delete a webhook permanently; its pending deliveries are cancelled. Scope: webhooks:write.")
  )
  .add(
    HttpApiEndpoint.get("deliveries")`/webhooks/${webhookId}/deliveries`
      .setUrlParams(Schema.Struct(paging(DeliveryAttemptId)))
      .addSuccess(DeliveryAttemptList)
      .addError(WebhookNotFoundWire)
      .addError(InsufficientScopeWire)
      .annotate(OpenApi.Description, "The webhook's delivery attempts, oldest first: event, attempt number, time, status code or error class, latency. Scope: webhooks:read.")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Webhooks")
{}

export const ProofList = Schema.Struct({ proofs: Schema.Array(Proof), total: Schema.Int, has_more: Schema.Boolean })
  .annotations({ identifier: "ProofList" })
export const CreateProofBatchInput = Schema.Struct({ proofs: Schema.Array(CreateProofInput) })
  .annotations({ identifier: "CreateProofBatchInput" })

const proofId = HttpApiSchema.param("id", Schema.String)

export class ProofsGroup extends HttpApiGroup.make("proofs")
  .add(
    HttpApiEndpoint.post("create", "/proofs")
      .setPayload(CreateProofInput.annotations(strictBody))
      .addSuccess(Proof, { status: 202 })
      .addError(RateLimitExceededWire)
      .addError(InsufficientScopeWire)
      .annotate(OpenApi.Description, "Queue a proof of `type` over `inputs` (integers as numbers or decimal strings). Inputs are checked before anything is queued. Metered. Scope: proofs:write.")
  )
  .add(
    HttpApiEndpoint.post("createBatch", "/proofs/batch")
      .setPayload(CreateProofBatchInput.annotations(strictBody))
      .addSuccess(ProofBatch, { status: 202 })
      .addError(RateLimitExceededWire)
      .addError(InsufficientScopeWire)
      .annotate(OpenApi.Description, "Queue 1 to 100 proofs, all or none; `details[].path` names the failing item. Counts its size against the daily quota. Scope: proofs:write.")
  )
  .add(
    HttpApiEndpoint.get("list", "/proofs")
      .setUrlParams(Schema.Struct({ ...paging(ProofId), status: Schema.optionalWith(ProofStatus, { exact: true }) }))
      .addSuccess(ProofList)
      .addError(InsufficientScopeWire)
      .annotate(OpenApi.Description, "The account's proofs, oldest first, optionally by `status`. Scope: proofs:read.")
  )
  .add(
    HttpApiEndpoint.get("get")`/proofs/${proofId}`
      .addSuccess(Proof)
      .addError(ProofNotFoundWire)
      .addError(InsufficientScopeWire)
      .annotate(OpenApi.Description, "One proof; `proof_blob` is base64 of the snarkjs proof JSON once completed. Scope: proofs:read.")
  )
  .add(
    HttpApiEndpoint.get("verify")`/proofs/${proofId}/verify`
      .addSuccess(ProofVerification)
      .addError(ProofNotFoundWire)
      .addError(ProofNotReadyWire)
      .addError(RateLimitExceededWire)
      .addError(InsufficientScopeWire)
      .annotate(OpenApi.Description, "Verify a completed proof against its circuit's verification key; fires proof.verified. Metered. Scope: proofs:read.")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Proofs")
{}

export const CircuitInput = Schema.Struct({
  name: Schema.String,
  visibility: Schema.Literal("public", "private"),
  kind: Schema.Literal("field", "uint64", "bit"),
  length: Schema.optionalWith(Schema.Int, { exact: true })
})
export const Circuit = Schema.Struct({
  type: Schema.String,
  circuit: Schema.String,
  version: Schema.String,
  description: Schema.String,
  inputs: Schema.Array(CircuitInput),
  public_signals: Schema.Array(Schema.String)
}).annotations({ identifier: "Circuit" })
export const CircuitWithKey = Schema.Struct({
  ...Circuit.fields,
  verification_key: Schema.Unknown.annotations({ description: "The Groth16 verification key as snarkjs exports it" })
}).annotations({ identifier: "CircuitWithKey" })
export const CircuitList = Schema.Struct({ circuits: Schema.Array(Circuit) }).annotations({ identifier: "CircuitList" })

export class CircuitsGroup extends HttpApiGroup.make("circuits")
  .add(
    HttpApiEndpoint.get("list", "/circuits")
      .addSuccess(CircuitList)
      .annotate(OpenApi.Description, "The proof types on offer, with their inputs (public or private) and public signal order.")
  )
  .add(
    HttpApiEndpoint.get("get")`/circuits/${HttpApiSchema.param("name", Schema.String)}`
      .addSuccess(CircuitWithKey)
      .addError(NotFoundWire)
      .annotate(OpenApi.Description, "One proof type by its `type` name, with its verification key, so anyone can verify proofs independently.")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Circuits")
{}

export class MzkApi extends HttpApi.make("mzk")
  .add(KeysGroup)
  .add(WebhooksGroup)
  .add(ProofsGroup)
  .add(CircuitsGroup)
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
