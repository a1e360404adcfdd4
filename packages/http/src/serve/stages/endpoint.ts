import { type Circuits, type Idempotency, invalidRequestFromParseError } from "@mzk/core"
import { Effect, ParseResult } from "effect"
import type { MzkRequest } from "../../wire/message.js"
import type { CompiledEndpoint } from "../compile.js"
import { compose, type Next, type RequestRecord, type Stage } from "../pipeline.js"
import { type Authenticate, authenticate } from "./authenticate.js"
import { requestContext } from "./context.js"
import { controlCharacters } from "./controlCharacters.js"
import { decodeForm, decodeJson, decodePath, decodeUrlParams } from "./decode.js"
import type { EndpointEnv } from "./env.js"
import { handle } from "./handle.js"
import { idempotency } from "./idempotency.js"
import { idempotencyKey } from "./idempotencyKey.js"
import { queryParameters } from "./queryParameters.js"
import type { Recover } from "./recover.js"
import { requireScope } from "./scope.js"

export interface EndpointServices {
  readonly authenticate: Authenticate
  readonly stageUpload: Circuits["Type"]["stageUpload"]
  readonly idempotency: Idempotency["Type"]
  readonly clientAddress: (request: MzkRequest) => string | null
  readonly recover: Recover
}

/**
 * The stages one endpoint has, in order, chosen once when the API is compiled: a request runs
 * only the steps its endpoint declares (a GET without a key skips authentication, an endpoint
 * without a body skips reading one).
 */
export const endpointStages = (endpoint: CompiledEndpoint, services: EndpointServices): ReadonlyArray<Stage<RequestRecord, EndpointEnv> | undefined> => {
  const { decodePath: path, decodePayload: payload, decodeUrlParams: urlParams, scope, upload } = endpoint
  return [
    endpoint.secured ? authenticate(services.authenticate) : undefined,
    endpoint.idempotent ? idempotencyKey : undefined,
    upload !== undefined && scope !== undefined ? requireScope(scope) : undefined,
    controlCharacters,
    queryParameters(endpoint.query),
    path === undefined ? undefined : decodePath(path),
    payload === undefined ? undefined : upload === undefined ? decodeJson(payload) : decodeForm(payload, upload, services.stageUpload),
    urlParams === undefined ? undefined : decodeUrlParams(urlParams),
    scope === undefined ? undefined : requireScope(scope),
    endpoint.idempotent ? idempotency(endpoint, services.idempotency, services.recover) : undefined,
    // A metered endpoint needs it whatever its method: the acting key its minute is charged to is the context's actor.
    endpoint.secured && (endpoint.method !== "GET" || endpoint.metered) ? requestContext(services.clientAddress) : undefined
  ]
}

/** The endpoint's whole chain, compiled once. */
export const compileEndpoint = (endpoint: CompiledEndpoint, services: EndpointServices): Next<RequestRecord> => {
  const chained = compose(endpointStages(endpoint, services), handle(endpoint, services.recover))
  // An upload's staged parts live until its answer: published by the handler, or dropped. Only
  // an upload reads its body into the scope; other requests are spared making one.
  const run: Next<RequestRecord> = endpoint.upload === undefined
    ? (chained as Next<RequestRecord>)
    : (record) => Effect.scoped(chained(record))
  // Suspended: describing a failure of a body nested thousands deep overflows the stack, a
  // defect that `recover` answers as such.
  return (record) => Effect.catchIf(run(record), ParseResult.isParseError, (error) => Effect.suspend(() => Effect.fail(invalidRequestFromParseError(error))))
}
