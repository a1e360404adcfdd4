import { ApiKeys } from "@mzk/core"
import { Effect, Redacted } from "effect"
import { implement } from "./implement.js"
import { authorized } from "./principal.js"

export const KeysHandlers = implement("keys", (handlers) =>
  Effect.gen(function*() {
    const keys = yield* ApiKeys
    return handlers
      .handle("create", ({ payload }) =>
        Effect.flatMap(authorized("keys:write"), (principal) =>
          Effect.map(keys.create(principal.account_id, payload, principal.scopes), (created) => ({
            ...created.api_key,
            key: Redacted.value(created.secret)
          }))))
      .handle("list", () => Effect.flatMap(authorized("keys:read"), (principal) => keys.list(principal.account_id)))
      .handle("revoke", ({ path }) => Effect.flatMap(authorized("keys:write"), (principal) => keys.revoke(principal.account_id, path.id)))
  }))
