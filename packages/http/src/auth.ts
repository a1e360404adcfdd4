import { ApiKeys, authenticate, SessionAuthenticator } from "@mzk/core"
import { Effect, Layer } from "effect"
import { Authentication } from "./api.js"

/** Bearer tokens: API keys, or whatever the embedding application's `SessionAuthenticator` accepts. */
export const AuthenticationLive = Layer.effect(
  Authentication,
  Effect.gen(function*() {
    const context = yield* Effect.context<ApiKeys | SessionAuthenticator>()
    return { bearer: (token) => authenticate(token).pipe(Effect.provide(context)) }
  })
)
