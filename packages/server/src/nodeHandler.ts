import { makeNodeListener } from "@mzk/http"
import { ManagedRuntime } from "effect"
import type { IncomingMessage, ServerResponse } from "node:http"
import { MzkCore, type MzkOptions } from "./mzk.js"

/**
 * mzk as a Node `(req, res)` handler, for mounting inside an existing `http.Server`, Express or
 * Fastify app. Requests keep their full path (`/api/v1/...`); route them to the handler unchanged.
 * Call `dispose` on shutdown to close the database.
 */
export const makeNodeHandler = async (options: MzkOptions) => {
  const runtime = ManagedRuntime.make(MzkCore(options))
  const handler: (request: IncomingMessage, response: ServerResponse) => void = await runtime.runPromise(makeNodeListener)
  return { handler, runtime, dispose: () => runtime.dispose() }
}
