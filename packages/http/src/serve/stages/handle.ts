import { type ArtifactDownload, metered } from "@mzk/core"
import { Effect } from "effect"
import type { CompiledEndpoint } from "../compile.js"
import { serveDownload } from "../download.js"
import type { Answer, Next, RequestRecord } from "../pipeline.js"
import type { EndpointEnv } from "./env.js"
import type { Recover } from "./recover.js"

/**
 * The handler, given what the stages decoded, and its success encoded: the endpoint's status, and
 * its body through the response schema; a metered endpoint's windows, which the core recorded in
 * the request's slot (`metered`), ride on the answer to `stamp`.
 */
export const handle = (endpoint: CompiledEndpoint, recover: Recover): Next<RequestRecord, EndpointEnv> => {
  const answer = (value: unknown): Answer =>
    endpoint.empty
      ? { status: endpoint.status, headers: {}, body: undefined }
      : { status: endpoint.status, headers: endpoint.successHeaders, body: endpoint.successBody(value) }
  return (record) => {
    const { path, payload, principal, urlParams } = record
    const handled = Effect.suspend(() => endpoint.handler({ principal, path, payload, urlParams } as Parameters<CompiledEndpoint["handler"]>[0]))
    // A file is answered by the request's validators and range, which only the request has.
    if (endpoint.download) return Effect.flatMap(handled, (file) => serveDownload(record, file as ArtifactDownload, recover))
    return endpoint.metered
      ? Effect.map(metered(handled), (result) => ({ ...answer(result.value), rateLimit: result.rate_limits }))
      : Effect.map(handled, answer)
  }
}
