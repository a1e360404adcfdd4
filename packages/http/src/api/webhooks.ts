import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import {
  CreateWebhookInput,
  DeliveryAttempt,
  ListDeliveryAttemptsQuery,
  ListWebhooksQuery,
  RotateWebhookSecretInput,
  UpdateWebhookInput,
  Webhook
} from "@mzk/core"
import { Schema } from "effect"
import { Authentication, idempotent, requires } from "./annotations.js"
import { InvalidWebhookUrlWire, SecretRotationInProgressWire, WebhookLimitReachedWire, WebhookNotFoundWire } from "./errors.js"
import { strictBody } from "./request.js"

export const CreatedWebhook = Schema.Struct({
  ...Webhook.fields,
  secret: Schema.String.annotations({ description: "The signing secret (`whsec_…`). Returned only here, never again." })
}).annotations({ identifier: "CreatedWebhook" })

export const RotatedWebhook = Schema.Struct({
  ...Webhook.fields,
  secret: Schema.String.annotations({
    description: "The new signing secret (`whsec_…`). Returned only by this rotation (and its replays with the same Idempotency-Key), never again."
  })
}).annotations({ identifier: "RotatedWebhook" })

export const WebhookList = Schema.Struct({ webhooks: Schema.Array(Webhook), total: Schema.Int, has_more: Schema.Boolean })
  .annotations({ identifier: "WebhookList" })
export const DeliveryAttemptList = Schema.Struct({ deliveries: Schema.Array(DeliveryAttempt), total: Schema.Int, has_more: Schema.Boolean })
  .annotations({ identifier: "DeliveryAttemptList" })

const webhookId = HttpApiSchema.param("id", Schema.String)

export class WebhooksGroup extends HttpApiGroup.make("webhooks")
  .add(
    HttpApiEndpoint.post("create", "/webhooks")
      .setPayload(strictBody(CreateWebhookInput))
      .addSuccess(CreatedWebhook, { status: 201 })
      .addError(InvalidWebhookUrlWire)
      .addError(WebhookLimitReachedWire)
      .pipe(requires("webhooks:write"), idempotent)
      .annotate(OpenApi.Description, "Register an HTTPS endpoint for events. The signing secret is in this response only.")
  )
  .add(
    HttpApiEndpoint.get("list", "/webhooks")
      .setUrlParams(ListWebhooksQuery)
      .addSuccess(WebhookList)
      .pipe(requires("webhooks:read"))
      .annotate(OpenApi.Description, "List the account's webhooks, oldest first.")
  )
  .add(
    HttpApiEndpoint.get("get")`/webhooks/${webhookId}`
      .addSuccess(Webhook)
      .addError(WebhookNotFoundWire)
      .pipe(requires("webhooks:read"))
      .annotate(OpenApi.Description, "One webhook.")
  )
  .add(
    HttpApiEndpoint.patch("update")`/webhooks/${webhookId}`
      .setPayload(strictBody(UpdateWebhookInput))
      .addSuccess(Webhook)
      .addError(InvalidWebhookUrlWire)
      .addError(WebhookNotFoundWire)
      .pipe(requires("webhooks:write"))
      .annotate(OpenApi.Description, "Change url, events, description or active; `active: true` re-enables a disabled webhook.")
  )
  .add(
    HttpApiEndpoint.del("remove")`/webhooks/${webhookId}`
      .addSuccess(HttpApiSchema.NoContent)
      .addError(WebhookNotFoundWire)
      .pipe(requires("webhooks:write"))
      .annotate(OpenApi.Description, "Delete a webhook permanently; its pending deliveries are cancelled.")
  )
  .add(
    HttpApiEndpoint.post("rotateSecret")`/webhooks/${webhookId}/rotate-secret`
      .setPayload(strictBody(RotateWebhookSecretInput))
      .addSuccess(RotatedWebhook)
      .addError(WebhookNotFoundWire)
      .addError(SecretRotationInProgressWire)
      .pipe(requires("webhooks:write"), idempotent)
      .annotate(
        OpenApi.Description,
        "Rotate the signing secret without a failed delivery: a new secret, in this response only, while the replaced one keeps " +
          "signing beside it for `expires_in` seconds (default 86400, at most 604800; 0 stops it now). Meanwhile every delivery " +
          "carries a signature with each (`Service-Signature: t=…,v1=<new>,v1=<old>`, and two `webhook-signature` entries), so " +
          "receivers verify with either secret and switch at leisure; `previous_secret_expires_at` shows when the old one stops. " +
          "Rotating again during that overlap is 409 `secret_rotation_in_progress` unless `force: true`, which stops the older " +
          "secret at once (at most two secrets ever sign; `force: true, expires_in: 0` cuts off a leaked secret now). A replay with " +
          "the same Idempotency-Key returns the same secret, as a replayed creation does: webhook secrets are stored to sign with."
      )
  )
  .add(
    HttpApiEndpoint.get("deliveries")`/webhooks/${webhookId}/deliveries`
      .setUrlParams(ListDeliveryAttemptsQuery)
      .addSuccess(DeliveryAttemptList)
      .addError(WebhookNotFoundWire)
      .pipe(requires("webhooks:read"))
      .annotate(
        OpenApi.Description,
        "The webhook's delivery attempts, oldest first: event, attempt number, time, status code or error class, latency."
      )
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Webhooks")
{}
