import { makeAuthenticate } from "@mzk/core"
import { Effect, Layer } from "effect"
import { Authentication } from "./api.js"

/** Bearer tokens: API keys, or whatever the embedding application's `SessionAuthenticator` accepts. */
export const AuthenticationLive = Layer.effect(Authentication, Effect.map(makeAuthenticate, (bearer) => ({ bearer })))
