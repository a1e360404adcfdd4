import { missingScope, type Scope } from "@mzk/core"
import { Effect } from "effect"
import type { RequestRecord, Stage } from "../pipeline.js"
import type { EndpointEnv } from "./env.js"

/**
 * The endpoint's scope (403 `insufficient_scope`). It runs after decoding, as it always did, and
 * for an upload also before the body is read: an upload may be tens of MiB, and a key that may not
 * upload is refused before it is.
 */
export const requireScope = (scope: Scope): Stage<RequestRecord, EndpointEnv> => (record, next) => {
  const denied = missingScope(record.principal!, scope)
  return denied === undefined ? next(record) : Effect.fail(denied)
}
