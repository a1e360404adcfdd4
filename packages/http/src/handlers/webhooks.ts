import { type CreatedWebhook, WebhookReplay, Webhooks } from "@mzk/core"
import { Effect, Redacted } from "effect"
import { implement } from "./handler.js"

/** A webhook as answered with its secret, this once: after its creation or a rotation. */
const withSecret = (created: CreatedWebhook) => ({ ...created.webhook, secret: Redacted.value(created.secret) })

export const WebhooksHandlers = Effect.gen(function*() {
  const webhooks = yield* Webhooks
  const replay = yield* WebhookReplay
  return implement("webhooks", {
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
      })),
    delivery: ({ path, principal }) => replay.getDelivery(principal.account_id, path.id, path.delivery_id),
    test: ({ path, principal }) => replay.test(principal.account_id, path.id),
    retryDelivery: ({ path, principal }) => replay.retryDelivery(principal.account_id, path.id, path.delivery_id),
    recover: ({ path, payload, principal }) => replay.recover(principal.account_id, path.id, payload),
    recoveries: ({ path, principal, urlParams }) => replay.listRecoveries(principal.account_id, path.id, urlParams),
    recovery: ({ path, principal }) => replay.getRecovery(principal.account_id, path.id, path.recovery_id)
  })
})
