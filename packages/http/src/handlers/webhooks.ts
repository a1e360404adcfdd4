import { Webhooks } from "@mzk/core"
import { Effect, Redacted } from "effect"
import { implement } from "./implement.js"
import { authorized } from "./principal.js"

const page = (params: { readonly limit?: number; readonly starting_after?: string }) => ({
  limit: params.limit ?? 20,
  ...(params.starting_after === undefined ? {} : { startingAfter: params.starting_after })
})

export const WebhooksHandlers = implement("webhooks", (handlers) =>
  Effect.gen(function*() {
    const webhooks = yield* Webhooks
    return handlers
      .handle("create", ({ payload }) =>
        Effect.gen(function*() {
          const { account_id } = yield* authorized("webhooks:write")
          const created = yield* webhooks.create(account_id, payload)
          return { ...created.webhook, secret: Redacted.value(created.secret) }
        }))
      .handle("list", ({ urlParams }) =>
        Effect.flatMap(authorized("webhooks:read"), (p) => webhooks.list(p.account_id, page(urlParams))))
      .handle("get", ({ path }) => Effect.flatMap(authorized("webhooks:read"), (p) => webhooks.get(p.account_id, path.id)))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(authorized("webhooks:write"), (p) => webhooks.update(p.account_id, path.id, payload)))
      .handle("remove", ({ path }) => Effect.flatMap(authorized("webhooks:write"), (p) => webhooks.remove(p.account_id, path.id)))
      .handle("deliveries", ({ path, urlParams }) =>
        Effect.gen(function*() {
          const { account_id } = yield* authorized("webhooks:read")
          const list = yield* webhooks.listDeliveryAttempts(account_id, path.id, page(urlParams))
          return { deliveries: list.attempts, total: list.total, has_more: list.has_more }
        }))
  }))
