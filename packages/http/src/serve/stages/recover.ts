import { InternalError, InvalidRequest, isStorageError, logStorageFailure, type RateLimitWindow } from "@mzk/core"
import { Cause, Effect, Option } from "effect"
import { ServiceUnavailable } from "../../api/errors.js"
import type { MzkResponse } from "../../wire/message.js"
import type { DeclaredError, ErrorEncoder } from "../encode.js"
import type { Answer, RequestRecord, Stage } from "../pipeline.js"

/** A declared error → its envelope; one the API does not declare is logged and answered as a 500. */
export type EncodeError = (error: DeclaredError, requestId: string) => Effect.Effect<MzkResponse>

export const makeEncodeError = (errors: ErrorEncoder): EncodeError => (error, requestId) => {
  const response = errors(error, requestId)
  if (response !== undefined) return Effect.succeed(response)
  return Effect.logError("An error the API does not declare", Cause.fail(error)).pipe(
    Effect.as(errors(new InternalError({ message: "An unexpected error occurred" }), requestId)!)
  )
}

export const isDeclaredError = (error: unknown): error is DeclaredError =>
  typeof error === "object" && error !== null && "_tag" in error && typeof error._tag === "string" &&
  "message" in error && typeof error.message === "string"

const isRateLimited = (error: unknown): error is DeclaredError & { readonly windows: ReadonlyArray<RateLimitWindow>; readonly retry_after_seconds: number } =>
  isDeclaredError(error) && error._tag === "RateLimitExceeded"

/** A failed request → its envelope (a 429 with its windows, for `stamp`): declared errors by their schema, anything else a logged 500. */
export type Recover = (cause: Cause.Cause<unknown>, record: RequestRecord) => Effect.Effect<Answer>

export const makeRecover = (encodeError: EncodeError): Recover => (cause, { requestId, route }) => {
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure)) {
    const error = failure.value
    if (isRateLimited(error)) {
      return Effect.map(encodeError(error, requestId), (response): Answer => ({ ...response, rateLimit: error.windows, retryAfterSeconds: error.retry_after_seconds }))
    }
    if (isStorageError(error)) {
      // The client's 503 says only that storage is unavailable: the why goes to the log, once per failure.
      const logged = logStorageFailure("request failed: storage unavailable", error, { request_id: requestId, route })
      return Effect.zipRight(logged, encodeError(error, requestId))
    }
    if (isDeclaredError(error)) return encodeError(error, requestId)
  }
  // Schema failures quote the offending value; a body nested thousands deep overflows the stack
  // while that text is built (a RangeError, or the FiberFailure of the formatter's own run).
  // It is still just a body that fails validation.
  const defect = Option.getOrUndefined(Cause.dieOption(cause))
  if (defect instanceof Error && /maximum call stack/i.test(defect.message)) {
    return encodeError(new InvalidRequest({ message: "The request body is nested too deeply" }), requestId)
  }
  if (Cause.isInterruptedOnly(cause)) {
    return encodeError(new ServiceUnavailable({ message: "The server is shutting down; retry" }), requestId)
  }
  return Effect.logError("Unhandled error in request", cause).pipe(
    Effect.zipRight(encodeError(new InternalError({ message: "An unexpected error occurred" }), requestId))
  )
}

/**
 * Every failure below becomes its envelope here. The rest of the pipeline is suspended, so code
 * that throws while it runs (an embedder's session check) is a defect answered as such, not one
 * that ends the request without an answer.
 */
export const recoverStage = <R extends RequestRecord>(recover: Recover): Stage<R> => (record, next) =>
  Effect.catchAllCause(Effect.suspend(() => next(record)), (cause) => recover(cause, record))
