import { requireScope, Webhooks } from "@mzk/core"
import { Effect, Redacted } from "effect"
import { CurrentPrincipal } from "../api.js"
import { implement } from "./implement.js"

const page = (params: { readonly limit?: number; readonly starting_after?: string }) => ({
  limit: params.limit ?? 20,
  ...(params.starting_after === undefined ? {} : { startingAfter: params.starting_after })
})

export const WebhooksHandlers = implement("webhooks", (handlers) =>
  Effect.gen(function*() {
    const webhooks = yield* Webhooks
    const principal = (scope: "webhooks:read" | "webhooks:write") =>
      Effect.tap(CurrentPrincipal, (p) => requireScope(p, scope))
    return handlers
      .handle("create", ({ payload }) =>
        Effect.gen(function*() {
          const { account_id } = yield* principal("webhooks:write")
          const created = yield* webhooks.create(account_id, payload)
          return { ...created.webhook, secret: Redacted.value(created.secret) }
        }))
      .handle("list", ({ urlParams }) =>
        Effect.flatMap(principal("webhooks:read"), (p) => webhooks.list(p.account_id, page(urlParams))))
      .handle("get", ({ path }) => Effect.flatMap(principal("webhooks:read"), (p) => webhooks.get(p.account_id, path.id)))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(principal("webhooks:write"), (p) => webhooks.update(p.account_id, path.id, payload)))
      .handle("remove", ({ path }) => Effect.flatMap(principal("webhooks:write"), (p) => webhooks.remove(p.account_id, path.id)))
      .handle("deliveries", ({ path, urlParams }) =>
        Effect.gen(function*() {
          const { account_id } = yield* principal("webhooks:read")
          const list = yield* webhooks.listDeliveryAttempts(account_id, path.id, page(urlParams))
          return { deliveries: list.attempts, total: list.total, has_more: list.has_more }
        }))
  }))
