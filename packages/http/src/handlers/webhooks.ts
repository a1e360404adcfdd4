import { type CreatedWebhook, Webhooks } from "@mzk/core"
import { Effect, Redacted } from "effect"
import { implement } from "./handler.js"

/** A webhook as answered with its secret, this once: after its creation or a rotation. */
const withSecret = (created: CreatedWebhook) => ({ ...created.webhook, secret: Redacted.value(created.secret) })

export const WebhooksHandlers = Effect.map(Webhooks, (webhooks) =>
  implement("webhooks", {
    create: ({ payload, principal }) => Effect.map(webhooks.create(principal.account_id, payload), withSecret),
    list: ({ principal, urlParams }) => webhooks.list(principal.account_id, urlParams),
    get: ({ path, principal }) => webhooks.get(principal.account_id, path.id),
    update: ({ path, payload, principal }) => webhooks.update(principal.account_id, path.id, payload),
    remove: ({ path, principal }) => webhooks.remove(principal.account_id, path.id),
    rotateSecret: ({ path, payload, principal }) => Effect.map(webhooks.rotateSecret(principal.account_id, path.id, payload), withSecret),
    deliveries: ({ path, principal, urlParams }) =>
      Effect.map(webhooks.listDeliveryAttempts(principal.account_id, path.id, urlParams), (list) => ({
        deliveries: list.attempts,
        total: list.total,
        has_more: list.has_more
      }))
  }))
