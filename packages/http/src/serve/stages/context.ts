import { actorOf, withRequestContext } from "@mzk/core"
import { header, type MzkRequest } from "../../wire/message.js"
import type { RequestRecord, Stage } from "../pipeline.js"
import type { EndpointEnv } from "./env.js"

/** The client's `User-Agent`, cut to what an audit entry keeps. */
const userAgent = (request: MzkRequest): string | null => {
  const value = header(request, "user-agent")
  return value === undefined ? null : value.slice(0, 512)
}

/**
 * The core's `RequestContext`, built once from the record: who acts, the request id, the client's
 * address and agent, the idempotency key. Only requests that may change something carry it (what
 * reads it is the audit log); a read spares the cost of setting it.
 */
export const requestContext = (clientAddress: (request: MzkRequest) => string | null): Stage<RequestRecord, EndpointEnv> => (record, next) =>
  withRequestContext({
    actor: actorOf(record.principal!),
    request_id: record.requestId,
    client_address: clientAddress(record.request),
    user_agent: userAgent(record.request),
    idempotency_key: record.idempotencyKey ?? null
  })(next(record))
