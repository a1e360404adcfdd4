import { type Idempotency, logFailure, requestFingerprint, type StoredResponse } from "@mzk/core"
import { Effect } from "effect"
import type { MzkResponse } from "../../wire/message.js"
import type { CompiledEndpoint } from "../compile.js"
import type { Answer, RequestRecord, Stage } from "../pipeline.js"
import type { EndpointEnv } from "./env.js"
import type { Recover } from "./recover.js"

/**
 * Results a retry must not replay (Stripe's rule): the request failed validation (400, also when a
 * service judged the input, e.g. proof inputs against their circuit), was refused before it ran
 * (429) or could not run (503); a corrected retry with the same key runs.
 */
const replayable = (response: MzkResponse) => response.status !== 400 && response.status !== 429 && response.status !== 503

/** What is kept of a response for replays: all of it but the fields the endpoint shows once (never the rate-limit windows). */
const kept = (endpoint: CompiledEndpoint, response: Answer): StoredResponse => {
  // An endpoint answers text; only the static documents are bytes, and only a GET streams a file.
  let body = response.body === undefined ? null : typeof response.body === "string" ? response.body : new TextDecoder().decode(response.body as Uint8Array)
  if (body !== null && endpoint.replayWithout.length > 0 && response.status < 300) {
    const value = JSON.parse(body) as Record<string, unknown>
    for (const field of endpoint.replayWithout) value[field] = null
    body = JSON.stringify(value)
  }
  return { status: response.status, headers: response.headers, body }
}

/**
 * The request's handling under its `Idempotency-Key` (POST only): the first request with the key
 * runs and its response, errors included, is kept; a retry gets that response replayed, marked
 * `Idempotent-Replayed: true`, without running (no rate limit or quota is charged). A 400, 429 or
 * 503 frees the key instead, as does a request stopped midway. Only a request that got this far
 * (authenticated, decoded, in scope) claims a key.
 */
export const idempotency = (endpoint: CompiledEndpoint, store: Idempotency["Type"], recover: Recover): Stage<RequestRecord, EndpointEnv> =>
(record, next) => {
  const { idempotencyKey: key, principal, requestId } = record
  if (key === undefined || principal === undefined) return next(record)
  const fingerprint = requestFingerprint(record.request.method, record.pathname, record.fingerprintBody)
  const account = principal.account_id
  return Effect.flatMap(store.begin(account, key, fingerprint, requestId), (begun) => {
    if (begun._tag === "Replay") {
      const { body, headers, status } = begun.response
      return Effect.succeed<Answer>({
        status,
        headers: { ...headers, "idempotent-replayed": "true", "original-request": begun.original_request_id },
        body: body ?? undefined
      })
    }
    const settle = (response: Answer) =>
      (replayable(response) ? store.finish(account, key, requestId, kept(endpoint, response)) : store.abandon(account, key, requestId)).pipe(
        Effect.catchAllCause((cause) =>
          logFailure("idempotency key could not be settled; it frees itself when its lock lapses", cause, { level: "Warning", annotations: { request_id: requestId } }))
      )
    return next(record).pipe(
      Effect.catchAllCause((cause) => recover(cause, record)),
      Effect.tap(settle),
      Effect.onInterrupt(() => Effect.ignore(store.abandon(account, key, requestId)))
    )
  })
}
