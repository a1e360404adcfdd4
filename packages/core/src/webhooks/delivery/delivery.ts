import { Schema } from "effect"
import { AccountId, DeliveryAttemptId, DeliveryId, EventId, WebhookId } from "../../kernel/ids.js"
import { pageQuery } from "../../kernel/paging.js"
import { Timestamp } from "../../kernel/time.js"
import { EventType } from "../../events/event.js"
import type { DisabledReason } from "../endpoints/webhook.js"

export const DeliveryStatus = Schema.Literal("pending", "succeeded", "failed", "cancelled")
export type DeliveryStatus = typeof DeliveryStatus.Type

/**
 * What queued a delivery's attempts: `scheduled`, an event's own delivery, whose failures are
 * retried on the schedule and, once it is spent, disable the webhook; `manual`, a test, a retry or
 * a recovery asked for through the API: one attempt, which settles the delivery either way and
 * never disables the webhook, but for a 410 Gone, the receiver's own word (Svix's manual trigger).
 */
export const DeliveryTrigger = Schema.Literal("scheduled", "manual")
export type DeliveryTrigger = typeof DeliveryTrigger.Type

/** One event on its way to one webhook: the outbox row the delivery engine works from. */
export interface DeliveryRecord {
  readonly id: DeliveryId
  readonly account_id: AccountId
  readonly event_id: EventId
  readonly webhook_id: WebhookId
  readonly status: DeliveryStatus
  /** What queued its pending (or last) attempt: the schedule, or a caller by hand. */
  readonly trigger: DeliveryTrigger
  /** Attempts made so far. */
  readonly attempts: number
  /** When the next attempt is due; null once the delivery is settled. */
  readonly next_attempt_at: Timestamp | null
  /**
   * Set while a delivery engine holds the delivery; it may be claimed again once this has passed.
   * Each claim sets a later value than the one before, so it doubles as the fencing token that
   * makes a stale holder's writes fail.
   */
  readonly lease_expires_at: Timestamp | null
  /** When the first attempt failed: retries are scheduled from this instant, not from each other. */
  readonly first_failed_at: Timestamp | null
  readonly last_attempt_at: Timestamp | null
  readonly created_at: Timestamp
  readonly updated_at: Timestamp
}

/** Why an attempt got no HTTP answer (mirrors `TransportFailure.reason`). */
export const DeliveryErrorClass = Schema.Literal(
  "timeout",
  "dns",
  "connection",
  "tls",
  "blocked_address",
  "invalid_url",
  "other"
)
export type DeliveryErrorClass = typeof DeliveryErrorClass.Type

/** One HTTP attempt of one delivery, as the delivery log shows it. */
export const DeliveryAttempt = Schema.Struct({
  id: DeliveryAttemptId.annotations({ description: "Id beginning with `att_`; sorts by attempt time" }),
  delivery_id: DeliveryId,
  webhook_id: WebhookId,
  event_id: EventId,
  event_type: EventType,
  attempt: Schema.Int.annotations({ description: "1 for the initial attempt, 2 to 6 for the retries, then one more for each manual retry or recovery" }),
  trigger: DeliveryTrigger.annotations({ description: "`scheduled`: the initial attempt or a retry of the schedule; `manual`: a test, a retry or a recovery" }),
  attempted_at: Timestamp,
  outcome: Schema.Literal("succeeded", "failed"),
  status_code: Schema.NullOr(Schema.Int).annotations({ description: "The HTTP status, or null when no answer came" }),
  error: Schema.NullOr(DeliveryErrorClass).annotations({ description: "Why no answer came, or null when one did" }),
  latency_ms: Schema.Int,
  response_body: Schema.NullOr(Schema.String).annotations({ description: "The start of the response body, at most 4 KiB of UTF-8" })
}).annotations({ identifier: "DeliveryAttempt" })
export type DeliveryAttempt = typeof DeliveryAttempt.Type

export interface DeliveryAttemptRecord extends DeliveryAttempt {
  readonly account_id: AccountId
}

export const toDeliveryAttempt = (record: DeliveryAttemptRecord): DeliveryAttempt => ({
  id: record.id,
  delivery_id: record.delivery_id,
  webhook_id: record.webhook_id,
  event_id: record.event_id,
  event_type: record.event_type,
  attempt: record.attempt,
  trigger: record.trigger,
  attempted_at: record.attempted_at,
  outcome: record.outcome,
  status_code: record.status_code,
  error: record.error,
  latency_ms: record.latency_ms,
  response_body: record.response_body
})

/** The state a delivery moves to after an attempt. */
export interface DeliveryAfterAttempt {
  readonly status: "pending" | "succeeded" | "failed"
  /** Set when `status` is pending: when the next retry is due. */
  readonly next_attempt_at: Timestamp | null
  readonly first_failed_at: Timestamp | null
  /** Set when `status` is failed: why the webhook is switched off with the delivery. */
  readonly disabled_reason?: DisabledReason
  /** The wait a 429 or 503 asked for with `Retry-After`, in seconds from the attempt's end, whether or not the schedule let it. */
  readonly retry_after_seconds?: number
}

/** One event on its way to one webhook, as the API shows it. */
export const Delivery = Schema.Struct({
  id: DeliveryId,
  webhook_id: WebhookId,
  event_id: EventId,
  event_type: EventType,
  status: DeliveryStatus.annotations({
    description: "`pending` until an attempt succeeds (`succeeded`), the last retry fails (`failed`), or the webhook is switched off or removed first (`cancelled`)"
  }),
  trigger: DeliveryTrigger.annotations({ description: "What queued its pending or last attempt: the retry schedule, or a test, retry or recovery" }),
  attempts: Schema.Int.annotations({ description: "Attempts made so far; each is in the webhook's delivery log" }),
  next_attempt_at: Schema.NullOr(Timestamp).annotations({ description: "When the next attempt is due; null once settled" }),
  last_attempt_at: Schema.NullOr(Timestamp),
  created_at: Timestamp,
  updated_at: Timestamp
}).annotations({ identifier: "Delivery" })
export type Delivery = typeof Delivery.Type

export const toDelivery = (record: DeliveryRecord, eventType: EventType): Delivery => ({
  id: record.id,
  webhook_id: record.webhook_id,
  event_id: record.event_id,
  event_type: eventType,
  status: record.status,
  trigger: record.trigger,
  attempts: record.attempts,
  next_attempt_at: record.next_attempt_at,
  last_attempt_at: record.last_attempt_at,
  created_at: record.created_at,
  updated_at: record.updated_at
})

/** A delivery log's query: its page, the cursor an attempt id (`att_…`, what the log lists). */
export const ListDeliveryAttemptsQuery = pageQuery(DeliveryAttemptId)
