import { InsufficientScope } from "./errors.js"
import type { AccountId, KeyId } from "./ids.js"
import type { Scope } from "./scopes.js"

/** Who is making a request: an account, its scopes, and whether it came with a key or a session. */
export interface Principal {
  readonly account_id: AccountId
  readonly scopes: ReadonlyArray<Scope>
  readonly via: { readonly kind: "api_key"; readonly key_id: KeyId } | { readonly kind: "session"; readonly actor_id?: string }
}

/** Why `principal` may not do what needs `scope` (403 `insufficient_scope`), or undefined when it may. */
export const missingScope = (principal: Principal, scope: Scope): InsufficientScope | undefined =>
  principal.scopes.includes(scope) ? undefined : new InsufficientScope({ message: `This operation needs the "${scope}" scope` })
