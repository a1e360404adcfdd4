import { Effect } from "effect"
import { NotFound } from "../api/errors.js"
import { MzkApi } from "../api/index.js"
import { makeRequestIds } from "../wire/requestId.js"
import type { Dispatch } from "./dispatch.js"
import { makeErrorEncoder } from "./encode.js"
import { Operations, operationRoutes } from "./operations.js"
import { makeRouter } from "./router.js"

/**
 * Only the operational endpoints (`/healthz`, `/readyz`, `/metrics`), for a process that serves no
 * API: an `mzk worker`, whose proofs and deliveries are counted in its own metrics. Errors have
 * the API's envelope and every answer a `Request-Id`.
 */
export const makeOperationsDispatcher: Effect.Effect<Dispatch> = Effect.map(Operations, (operations) => {
  const route = makeRouter(operationRoutes(operations))
  const encode = makeErrorEncoder(MzkApi)
  const nextRequestId = makeRequestIds()
  return (request) =>
    Effect.clockWith((clock) => {
      const requestId = nextRequestId(clock)
      const path = request.url.split("?", 1)[0]!
      const match = route(request.method, path)
      const answered = match._tag === "Found"
        ? Effect.catchAll(match.route.respond(request), (error) => Effect.succeed(encode(error, requestId)!))
        : Effect.succeed(encode(new NotFound({ message: `No route ${request.method} ${path}: this process serves only /healthz, /readyz and /metrics` }), requestId)!)
      return Effect.map(answered, (response) => ({ ...response, headers: { ...response.headers, "request-id": requestId } }))
    })
})
