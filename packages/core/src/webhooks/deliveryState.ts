import { millisFromTimestamp, timestampFromMillis } from "../kernel/time.js"
import type { DeliveryOutcome, DeliveryRecord } from "./delivery.js"

/**
 * Where a delivery goes after its attempt number `attempt` (1 for the initial one) ended at
 * `endMs`: `succeeded` when it got a 2xx; otherwise `pending` with its next attempt due at the
 * next offset of `retryScheduleMs` from the first failure (not from the attempt before, so a slow
 * receiver does not stretch the schedule), never earlier than now; `failed` once every retry of
 * the schedule has been made, which disables the webhook. A `manual` attempt (a test, a retry, a
 * recovery) is one attempt: it settles the delivery either way, leaves the schedule alone and
 * never disables the webhook.
 */
export const nextDeliveryState = (
  delivery: Pick<DeliveryRecord, "first_failed_at"> & Partial<Pick<DeliveryRecord, "trigger">>,
  attempt: number,
  succeeded: boolean,
  endMs: number,
  retryScheduleMs: ReadonlyArray<number>
): DeliveryOutcome => {
  const settled = { next_attempt_at: null, first_failed_at: delivery.first_failed_at, disables_webhook: false }
  if (succeeded) return { status: "succeeded", ...settled }
  if (delivery.trigger === "manual") return { status: "failed", ...settled }
  const firstFailed = delivery.first_failed_at ?? timestampFromMillis(endMs)
  const delay = retryScheduleMs[attempt - 1]
  if (delay === undefined) return { status: "failed", next_attempt_at: null, first_failed_at: firstFailed, disables_webhook: true }
  const due = Math.max(millisFromTimestamp(firstFailed) + delay, endMs)
  return { status: "pending", next_attempt_at: timestampFromMillis(due), first_failed_at: firstFailed, disables_webhook: false }
}
