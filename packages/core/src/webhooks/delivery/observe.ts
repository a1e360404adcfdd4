import { Effect } from "effect"
import type { TelemetryShape } from "../../kernel/telemetry.js"
import type { DeliveryAfterAttempt, DeliveryAttemptRecord } from "./delivery.js"

/**
 * A recorded delivery attempt, where operators see it: one structured log line (ids, event type,
 * attempt, outcome, status code or error class, latency, the next attempt, the wait a 429 or 503
 * asked for, why the webhook was disabled) and the metrics port.
 * Never the URL (receivers put tokens in query strings), the body or the signature.
 */
export const observeAttempt = (telemetry: TelemetryShape, attempt: DeliveryAttemptRecord, after: DeliveryAfterAttempt): Effect.Effect<void> =>
  Effect.suspend(() => {
    telemetry.delivery({ outcome: attempt.outcome, latency_ms: attempt.latency_ms, final: after.status !== "pending" })
    const annotations: Record<string, unknown> = {
      event: "webhook.attempt",
      delivery_id: attempt.delivery_id,
      webhook_id: attempt.webhook_id,
      account_id: attempt.account_id,
      event_id: attempt.event_id,
      event_type: attempt.event_type,
      attempt: attempt.attempt,
      outcome: attempt.outcome,
      latency_ms: attempt.latency_ms,
      delivery_status: after.status
    }
    if (attempt.status_code !== null) annotations.status_code = attempt.status_code
    if (attempt.error !== null) annotations.error = attempt.error
    if (after.next_attempt_at !== null) annotations.next_attempt_at = after.next_attempt_at
    // The receiver's own signals: what it asked for beside when the retry was put (the schedule
    // bounds it), and why the webhook was switched off with this attempt.
    if (after.retry_after_seconds !== undefined) annotations.retry_after_seconds = after.retry_after_seconds
    if (after.disabled_reason !== undefined) annotations.disabled_reason = after.disabled_reason
    // Info either way: a receiver that is down is its owner's problem, not the server's; disabling
    // the webhook after the last retry is the warning.
    return Effect.annotateLogs(Effect.logInfo(`webhook attempt ${attempt.outcome}`), annotations)
  })
