import { HttpApiBuilder } from "@effect/platform"
import { ApiKeys, requireScope } from "@mzk/core"
import { Effect, Redacted } from "effect"
import { CurrentPrincipal, MzkApi } from "../api.js"

export const KeysLive = HttpApiBuilder.group(MzkApi, "keys", (handlers) =>
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
