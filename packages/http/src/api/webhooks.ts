import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import {
  CreateWebhookInput,
  Delivery,
  DeliveryAttempt,
  EventEnvelope,
  ListDeliveryAttemptsQuery,
  ListRecoveriesQuery,
  ListWebhooksQuery,
  RecoverWebhookInput,
  Recovery,
  RotateWebhookSecretInput,
  UpdateWebhookInput,
  Webhook
} from "@mzk/core"
import { Schema } from "effect"
import { Authentication, idempotent, requires } from "./annotations.js"
import {
  DeliveryNotFoundWire,
  DeliveryPendingWire,
  InvalidWebhookUrlWire,
  RecoveryNotFoundWire,
  SecretRotationInProgressWire,
  WebhookInactiveWire,
  WebhookLimitReachedWire,
  WebhookNotFoundWire
} from "./errors.js"
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

export const WebhookTest = Schema.Struct({
  event: EventEnvelope,
  delivery: Delivery
}).annotations({ identifier: "WebhookTest" })

export const RecoveryList = Schema.Struct({ recoveries: Schema.Array(Recovery), total: Schema.Int, has_more: Schema.Boolean })
  .annotations({ identifier: "RecoveryList" })

const webhookId = HttpApiSchema.param("id", Schema.String)
const deliveryId = HttpApiSchema.param("delivery_id", Schema.String)
const recoveryId = HttpApiSchema.param("recovery_id", Schema.String)

/** Why a manual attempt behaves as it does, said once for test, retry and recover. */
const MANUAL = "It is one attempt, signed afresh, logged with `trigger: manual`: a failure is not retried on the schedule and never disables the webhook (a 410 Gone still does: the receiver's own word)."

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
      .annotate(OpenApi.Description, "List the account's webhooks, newest first.")
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
      .annotate(
        OpenApi.Description,
        "Change url, events, description or active; `active: true` re-enables a disabled webhook, and with `recover_since` also " +
          "starts a recovery of what failed since then, as `POST /webhooks/{id}/recover` does (see `GET /webhooks/{id}/recoveries`)."
      )
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
        "The webhook's delivery attempts, newest first: event, delivery, attempt number, trigger, time, status code or error class, latency."
      )
  )
  .add(
    HttpApiEndpoint.get("delivery")`/webhooks/${webhookId}/deliveries/${deliveryId}`
      .addSuccess(Delivery)
      .addError(WebhookNotFoundWire)
      .addError(DeliveryNotFoundWire)
      .pipe(requires("webhooks:read"))
      .annotate(
        OpenApi.Description,
        "One delivery of the webhook (its id is each attempt's `delivery_id`): its status, attempts and when the next one is due."
      )
  )
  .add(
    HttpApiEndpoint.post("test")`/webhooks/${webhookId}/test`
      .addSuccess(WebhookTest, { status: 202 })
      .addError(WebhookNotFoundWire)
      .addError(WebhookInactiveWire)
      .pipe(requires("webhooks:write"), idempotent)
      .annotate(
        OpenApi.Description,
        "Send a `webhook.test` event to this webhook only, whatever it subscribes to (no webhook can subscribe to " +
          "`webhook.test`); an inactive webhook is refused, since it receives nothing until re-enabled. Answers with the event and its " +
          `delivery, to follow with \`GET /webhooks/{id}/deliveries/{delivery_id}\`. ${MANUAL}`
      )
  )
  .add(
    HttpApiEndpoint.post("retryDelivery")`/webhooks/${webhookId}/deliveries/${deliveryId}/retry`
      .addSuccess(Delivery, { status: 202 })
      .addError(WebhookNotFoundWire)
      .addError(DeliveryNotFoundWire)
      .addError(DeliveryPendingWire)
      .addError(WebhookInactiveWire)
      .pipe(requires("webhooks:write"), idempotent)
      .annotate(
        OpenApi.Description,
        "Queue one more attempt of a delivery now (failed, cancelled or delivered): the same event and event id. A delivery " +
          `still waiting for an attempt is 409 \`delivery_pending\`; an inactive webhook 409 \`webhook_inactive\`. ${MANUAL}`
      )
  )
  .add(
    HttpApiEndpoint.post("recover")`/webhooks/${webhookId}/recover`
      .setPayload(strictBody(RecoverWebhookInput))
      .addSuccess(Recovery, { status: 202 })
      .addError(WebhookNotFoundWire)
      .addError(WebhookInactiveWire)
      .pipe(requires("webhooks:write"), idempotent)
      .annotate(
        OpenApi.Description,
        "Re-queue, in the background, every failed delivery of this webhook created since `since` (within the event retention " +
          "window), and those cancelled when it was switched off: answers with the running recovery, to follow with " +
          `\`GET /webhooks/{id}/recoveries/{recovery_id}\`. Each re-queued delivery gets one attempt. ${MANUAL}`
      )
  )
  .add(
    HttpApiEndpoint.get("recoveries")`/webhooks/${webhookId}/recoveries`
      .setUrlParams(ListRecoveriesQuery)
      .addSuccess(RecoveryList)
      .addError(WebhookNotFoundWire)
      .pipe(requires("webhooks:read"))
      .annotate(OpenApi.Description, "The webhook's recoveries, newest first, with their status and how many deliveries each re-queued.")
  )
  .add(
    HttpApiEndpoint.get("recovery")`/webhooks/${webhookId}/recoveries/${recoveryId}`
      .addSuccess(Recovery)
      .addError(WebhookNotFoundWire)
      .addError(RecoveryNotFoundWire)
      .pipe(requires("webhooks:read"))
      .annotate(OpenApi.Description, "One recovery: `running`, `completed` or `cancelled`, and the deliveries it has re-queued so far.")
  )
  .middleware(Authentication)
  // Not "Webhooks": the document's `webhooks` (the events mzk sends) is listed under that name.
  .annotate(OpenApi.Title, "Webhook endpoints")
{}
