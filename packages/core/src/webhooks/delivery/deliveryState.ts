import { millisFromTimestamp, timestampFromMillis } from "../../kernel/time.js"
import type { DeliveryAfterAttempt, DeliveryRecord } from "./delivery.js"
import { retryAfterMillis } from "./retryAfter.js"

/** What an attempt got back: an HTTP status (null when no answer came) and its `Retry-After`, if any. */
export interface AttemptAnswer {
  readonly status: number | null
  readonly retryAfter?: string | undefined
}

/** Statuses whose `Retry-After` is heeded: the receiver is overloaded or down for a while, and says until when. */
const ASKS_TO_WAIT = new Set([429, 503])

/**
 * Where a delivery goes after its attempt number `attempt` (1 for the initial one) ended at
 * `endMs` with `answer`:
 * - a 2xx: `succeeded`;
 * - a 410 Gone: `failed` at once, and the webhook is disabled (`endpoint_gone`): the receiver says
 *   it will never take deliveries again, whatever queued the attempt;
 * - a manual attempt (a test, a retry, a recovery) is one attempt: any other answer settles it
 *   `failed`, leaves the schedule alone and never disables the webhook;
 * - otherwise `pending` with its next attempt due at the next offset of `retryScheduleMs` from the
 *   first failure (not from the attempt before, so a slow receiver does not stretch the schedule),
 *   never earlier than now; `failed` (webhook disabled, `delivery_failures`) once every retry of
 *   the schedule has been made.
 *
 * A 429 or 503 with a `Retry-After` (seconds or an HTTP-date) moves the next attempt later, to
 * when it asks, but never past the time the retry after that one is due (so a receiver can make
 * mzk wait, not make a delivery live longer than the schedule: the last retry keeps its time), and
 * never earlier than the schedule. A value that is neither form changes nothing.
 */
export const nextDeliveryState = (
  delivery: Pick<DeliveryRecord, "first_failed_at"> & Partial<Pick<DeliveryRecord, "trigger">>,
  attempt: number,
  answer: AttemptAnswer,
  endMs: number,
  retryScheduleMs: ReadonlyArray<number>
): DeliveryAfterAttempt => {
  const { retryAfter, status } = answer
  if (status !== null && status >= 200 && status < 300) {
    return { status: "succeeded", next_attempt_at: null, first_failed_at: delivery.first_failed_at }
  }
  const firstFailed = delivery.first_failed_at ?? timestampFromMillis(endMs)
  if (status === 410) return { status: "failed", next_attempt_at: null, first_failed_at: firstFailed, disabled_reason: "endpoint_gone" }
  if (delivery.trigger === "manual") return { status: "failed", next_attempt_at: null, first_failed_at: delivery.first_failed_at }
  const delay = retryScheduleMs[attempt - 1]
  if (delay === undefined) {
    return { status: "failed", next_attempt_at: null, first_failed_at: firstFailed, disabled_reason: "delivery_failures" }
  }
  const firstFailedMs = millisFromTimestamp(firstFailed)
  const scheduled = Math.max(firstFailedMs + delay, endMs)
  const asked = status !== null && ASKS_TO_WAIT.has(status) && retryAfter !== undefined ? retryAfterMillis(retryAfter, endMs) : undefined
  if (asked === undefined) return { status: "pending", next_attempt_at: timestampFromMillis(scheduled), first_failed_at: firstFailed }
  const latest = firstFailedMs + (retryScheduleMs[attempt] ?? delay)
  const due = Math.max(scheduled, Math.min(asked, latest))
  return {
    status: "pending",
    next_attempt_at: timestampFromMillis(due),
    first_failed_at: firstFailed,
    retry_after_seconds: Math.max(0, Math.ceil((asked - endMs) / 1000))
  }
}
