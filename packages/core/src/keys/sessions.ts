import { Context, Effect, Layer, Option, type Redacted } from "effect"
import type { AccountId } from "../kernel/ids.js"
import type { Scope } from "../kernel/scopes.js"

export interface Session {
  readonly account_id: AccountId
  /** Defaults to every scope: a signed-in user may do anything in their account. */
  readonly scopes?: ReadonlyArray<Scope>
  /** Who holds the session in the embedding application (a user id): the actor of its changes in the audit log. */
  readonly actor_id?: string
}

/**
 * Turns a session token of the embedding application into an account. mzk never issues sessions;
 * the application that embeds it does, and plugs its check in here.
 */
export class SessionAuthenticator extends Context.Tag("@mzk/core/SessionAuthenticator")<SessionAuthenticator, {
  readonly authenticate: (token: Redacted.Redacted<string>) => Effect.Effect<Option.Option<Session>>
}>() {
  /** Accepts no session at all: the standalone server's default, where only API keys work. */
  static readonly none = Layer.succeed(this, { authenticate: () => Effect.succeed(Option.none()) })
}
