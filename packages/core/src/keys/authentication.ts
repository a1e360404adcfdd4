import { Effect, Option, Redacted } from "effect"
import { KEY_PREFIX } from "./token.js"
import { InvalidApiKey, type StorageError } from "../kernel/errors.js"
import { SessionAuthenticator } from "./sessions.js"
import type { Principal } from "../kernel/principal.js"
import { SCOPES } from "../kernel/scopes.js"
import { ApiKeys } from "./service.js"

export type Authenticate = (token: Redacted.Redacted<string>) => Effect.Effect<Principal, InvalidApiKey | StorageError>

/**
 * A bearer token → its principal. Tokens in the API-key format are checked as keys; anything else
 * is offered to the embedding application's `SessionAuthenticator`. Built once (the HTTP layer
 * calls it on every request, so it holds its services rather than looking them up each time).
 */
export const makeAuthenticate: Effect.Effect<Authenticate, never, ApiKeys | SessionAuthenticator> = Effect.gen(function*() {
  const keys = yield* ApiKeys
  const sessions = yield* SessionAuthenticator
  return (token) => {
    const raw = Redacted.value(token)
    if (raw.startsWith(KEY_PREFIX)) return keys.authenticate(token)
    if (raw.length === 0) return Effect.fail(new InvalidApiKey({ message: "An API key is required: send Authorization: Bearer <key>" }))
    return Effect.flatMap(sessions.authenticate(token), (session) =>
      Option.isSome(session)
        ? Effect.succeed({
          account_id: session.value.account_id,
          scopes: session.value.scopes ?? SCOPES,
          via: session.value.actor_id === undefined ? { kind: "session" } : { kind: "session", actor_id: session.value.actor_id }
        } satisfies Principal)
        : Effect.fail(new InvalidApiKey({ message: "The API key is missing, malformed, revoked or expired" })))
  }
})

export const authenticate = (
  token: Redacted.Redacted<string>
): Effect.Effect<Principal, InvalidApiKey | StorageError, ApiKeys | SessionAuthenticator> =>
  Effect.flatMap(makeAuthenticate, (run) => run(token))
