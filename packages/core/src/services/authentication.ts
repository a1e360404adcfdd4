import { Effect, Option, Redacted } from "effect"
import { KEY_PREFIX } from "../apiKeyToken.js"
import { InvalidApiKey, type StorageError } from "../errors.js"
import { SessionAuthenticator } from "../ports/sessionAuthenticator.js"
import type { Principal } from "../principal.js"
import { SCOPES } from "../scopes.js"
import { ApiKeys } from "./apiKeys.js"

/**
 * A bearer token → its principal. Tokens in the API-key format are checked as keys; anything else
 * is offered to the embedding application's `SessionAuthenticator`.
 */
export const authenticate = (
  token: Redacted.Redacted<string>
): Effect.Effect<Principal, InvalidApiKey | StorageError, ApiKeys | SessionAuthenticator> =>
  Effect.gen(function*() {
    const raw = Redacted.value(token)
    if (raw.startsWith(KEY_PREFIX)) return yield* (yield* ApiKeys).authenticate(token)
    if (raw.length > 0) {
      const session = yield* (yield* SessionAuthenticator).authenticate(token)
      if (Option.isSome(session)) {
        return {
          account_id: session.value.account_id,
          scopes: session.value.scopes ?? SCOPES,
          via: { kind: "session" }
        } satisfies Principal
      }
    }
    return yield* new InvalidApiKey({
      message: raw.length === 0 ? "An API key is required: send Authorization: Bearer <key>" : "The API key is missing, malformed or revoked"
    })
  })
