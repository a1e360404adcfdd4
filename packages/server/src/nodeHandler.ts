import { NodeHttpServer } from "@effect/platform-node"
import { MzkHttpAppLive, mzkHttpApp, NoRequestSpans } from "@mzk/http"
import { Effect, Layer, ManagedRuntime } from "effect"
import type { IncomingMessage, ServerResponse } from "node:http"
import { MzkCore, type MzkOptions } from "./mzk.js"
import { drainInsteadOfReset } from "./nodeServer.js"

/**
 * mzk as a Node `(req, res)` handler, for mounting inside an existing `http.Server`, Express or
 * Fastify app. Requests keep their full path (`/api/v1/...`); route them to the handler unchanged.
 * Call `dispose` on shutdown to close the database.
 */
export const makeNodeHandler = async (options: MzkOptions) => {
  const runtime = ManagedRuntime.make(
    Layer.mergeAll(MzkHttpAppLive, NodeHttpServer.layerContext, NoRequestSpans).pipe(Layer.provideMerge(MzkCore(options)))
  )
  const platformHandler: (request: IncomingMessage, response: ServerResponse) => void = await runtime.runPromise(
    Effect.flatMap(mzkHttpApp, (app) => NodeHttpServer.makeHandler(app))
  )
  const handler = (request: IncomingMessage, response: ServerResponse) => {
    drainInsteadOfReset(request, response)
    platformHandler(request, response)
  }
  return { handler, runtime, dispose: () => runtime.dispose() }
}
