import { idempotencyKeyProblem, InvalidRequest } from "@mzk/core"
import { Effect } from "effect"
import { header } from "../../wire/message.js"
import type { RequestRecord, Stage } from "../pipeline.js"
import type { EndpointEnv } from "./env.js"

/**
 * An idempotent endpoint's `Idempotency-Key`, checked for its form (400) and put on the record;
 * the key is bound to the method, the path and, by default, the declared body length (the JSON
 * body's text replaces it once read).
 */
export const idempotencyKey: Stage<RequestRecord, EndpointEnv> = (record, next) => {
  const key = header(record.request, "idempotency-key")
  if (key === undefined) return next(record)
  const problem = idempotencyKeyProblem(key)
  if (problem !== undefined) {
    return Effect.fail(new InvalidRequest({ message: `Idempotency-Key ${problem}`, details: [{ path: "Idempotency-Key", message: problem }] }))
  }
  return next({ ...record, idempotencyKey: key, fingerprintBody: header(record.request, "content-length") ?? "" })
}
