import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { CreateWebhookInput, DeliveryAttempt, ListDeliveryAttemptsQuery, ListWebhooksQuery, UpdateWebhookInput, Webhook } from "@mzk/core"
import { Schema } from "effect"
import { Authentication, idempotent, requires } from "./annotations.js"
import { InvalidWebhookUrlWire, WebhookLimitReachedWire, WebhookNotFoundWire } from "./errors.js"
import { strictBody } from "./request.js"

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
