import { ApiKeys, type CreatedKey } from "@mzk/core"
import { Effect, Redacted } from "effect"
import { implement } from "./handler.js"

/** A created key as answered: its record and, this once, its raw value. */
const withRawKey = (created: CreatedKey) => ({ ...created.api_key, key: Redacted.value(created.secret) })

export const KeysHandlers = Effect.map(ApiKeys, (keys) =>
  implement("keys", {
    create: ({ payload, principal }) => Effect.map(keys.create(principal.account_id, payload, principal.scopes), withRawKey),
    roll: ({ path, payload, principal }) => Effect.map(keys.roll(principal.account_id, path.id, payload, principal.scopes), withRawKey),
    list: ({ principal }) => keys.list(principal.account_id),
    revoke: ({ path, principal }) => keys.revoke(principal.account_id, path.id)
  }))
