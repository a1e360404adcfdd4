import { Effect } from "effect"
import { MzkApi } from "../api/index.js"
import type { MzkResponse } from "../wire/message.js"
import { makeRequestIds } from "../wire/requestId.js"
import type { Dispatch } from "./dispatch.js"
import { makeErrorEncoder } from "./encode.js"
import { type OperationRoute, Operations, operationRoutes } from "./operations.js"
import { compose, type RequestRecord } from "./pipeline.js"
import { makeRouter } from "./router.js"
import { locate, openRecord } from "./stages/locate.js"
import { makeEncodeError, makeRecover, recoverStage } from "./stages/recover.js"
import { refuse } from "./stages/refuse.js"
import { stamp } from "./stages/stamp.js"

/**
 * Only the operational endpoints (`/healthz`, `/readyz`, `/metrics`), for a process that serves no
 * API: an `mzk worker`, whose proofs and deliveries are counted in its own metrics. The API's
 * pipeline with fewer stages: no body checks, no request metrics or access log (the probes would
 * swamp them), a 404 naming the paths it serves for any other request.
 */
export const makeOperationsDispatcher: Effect.Effect<Dispatch> = Effect.map(Operations, (operations) => {
  const encodeError = makeEncodeError(makeErrorEncoder(MzkApi))
  type Record = RequestRecord<OperationRoute>
  const run = compose<Record>([
    locate({ route: makeRouter(operationRoutes(operations)), precheck: false }),
    stamp,
    recoverStage<Record>(makeRecover(encodeError)),
    refuse<Record>(encodeError, {
      notFound: (method, pathname) => `No route ${method} ${pathname}: this process serves only /healthz, /readyz and /metrics`,
      methodNotAllowed: false
    })
  ], (record) => (record.match._tag === "Found" ? record.match.route.respond(record.request) : Effect.die("refuse answers every request without a route")))
  const nextRequestId = makeRequestIds()
  // `recover` answers every failure.
  const dispatch: Dispatch = (request) => Effect.clockWith((clock) => run(openRecord(request, nextRequestId(clock))) as Effect.Effect<MzkResponse>)
  return dispatch
})
