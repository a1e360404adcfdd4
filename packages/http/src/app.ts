import type { ApiKeys, CircuitCatalog, Proofs, SessionAuthenticator, Webhooks } from "@mzk/core"
import { Effect } from "effect"
import { makeDispatcher } from "./dispatcher.js"
import { toNodeListener } from "./node.js"

export { type Dispatch, makeDispatcher } from "./dispatcher.js"
export { DOCS_PATH, OPENAPI_PATH, openApiDocument } from "./docs.js"
export { toNodeListener } from "./node.js"
export { makeWebHandler } from "./web.js"

/** The services mzk's HTTP layer is built over (see `@mzk/server` for the default wiring). */
export type HttpServices = ApiKeys | Webhooks | Proofs | CircuitCatalog | SessionAuthenticator

/**
 * mzk as a Node `(req, res)` listener whose requests run on the current runtime: for a `node:http`
 * server of your own (see `@mzk/server` for `mzk serve`'s, which answers protocol errors too).
 */
export const makeNodeListener: Effect.Effect<ReturnType<typeof toNodeListener>, never, HttpServices> = Effect.gen(function*() {
  const dispatch = yield* makeDispatcher
  const runtime = yield* Effect.runtime<never>()
  return toNodeListener(runtime, dispatch)
})
