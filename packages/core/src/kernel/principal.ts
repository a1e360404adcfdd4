import { Effect } from "effect"
import { InsufficientScope } from "./errors.js"
import type { AccountId, KeyId } from "./ids.js"
import type { Scope } from "./scopes.js"

/** Who is making a request: an account, its scopes, and whether it came with a key or a session. */
export interface Principal {
  readonly account_id: AccountId
  readonly scopes: ReadonlyArray<Scope>
  readonly via: { readonly kind: "api_key"; readonly key_id: KeyId } | { readonly kind: "session" }
}

/** The principal, if it holds `scope`; 403 `insufficient_scope` otherwise. */
export const requireScope = (principal: Principal, scope: Scope): Effect.Effect<Principal, InsufficientScope> =>
  principal.scopes.includes(scope)
    ? Effect.succeed(principal)
    : Effect.fail(new InsufficientScope({ message: `This operation needs the "${scope}" scope` }))
