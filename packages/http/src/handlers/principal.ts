import { type InsufficientScope, type Principal, requireScope, type Scope } from "@mzk/core"
import { Effect, FiberRef } from "effect"
import { CurrentRequest } from "../requestPipeline.js"

/**
 * The principal of the request being served, once it holds `scope` (403 `insufficient_scope`
 * otherwise). Every handler of an authenticated endpoint starts here; the dispatcher has checked
 * the bearer token before the handler runs.
 */
export const authorized = (scope: Scope): Effect.Effect<Principal, InsufficientScope> =>
  Effect.flatMap(FiberRef.get(CurrentRequest), (state) =>
    state?.principal === undefined
      ? Effect.dieMessage("A handler asked for the principal outside an authenticated request")
      : requireScope(state.principal, scope))
