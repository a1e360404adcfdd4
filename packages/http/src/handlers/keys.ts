import { ApiKeys } from "@mzk/core"
import { Effect, Redacted } from "effect"
import { implement } from "./handler.js"

export const KeysHandlers = Effect.map(ApiKeys, (keys) =>
  implement("keys", {
    create: ({ payload, principal }) =>
      Effect.map(keys.create(principal.account_id, payload, principal.scopes), (created) => ({
        ...created.api_key,
        key: Redacted.value(created.secret)
      })),
    list: ({ principal }) => keys.list(principal.account_id),
    revoke: ({ path, principal }) => keys.revoke(principal.account_id, path.id)
  }))
