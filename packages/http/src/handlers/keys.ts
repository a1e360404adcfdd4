import { ApiKeys, requireScope } from "@mzk/core"
import { Effect, Redacted } from "effect"
import { CurrentPrincipal } from "../api.js"
import { implement } from "./implement.js"

export const KeysHandlers = implement("keys", (handlers) =>
  Effect.gen(function*() {
    const keys = yield* ApiKeys
    return handlers
      .handle("create", ({ payload }) =>
        Effect.gen(function*() {
          const principal = yield* CurrentPrincipal
          yield* requireScope(principal, "keys:write")
          const created = yield* keys.create(principal.account_id, payload, principal.scopes)
          return { ...created.api_key, key: Redacted.value(created.secret) }
        }))
      .handle("list", () =>
        Effect.gen(function*() {
          const principal = yield* CurrentPrincipal
          yield* requireScope(principal, "keys:read")
          return yield* keys.list(principal.account_id)
        }))
      .handle("revoke", ({ path }) =>
        Effect.gen(function*() {
          const principal = yield* CurrentPrincipal
          yield* requireScope(principal, "keys:write")
          yield* keys.revoke(principal.account_id, path.id)
        }))
  }))
