import { Schema } from "effect"
import { AccountId, DeliveryId, EventId, WebhookId } from "../ids.js"
import { Timestamp } from "../time.js"

export const DeliveryStatus = Schema.Literal("pending", "succeeded", "failed", "cancelled")
export type DeliveryStatus = typeof DeliveryStatus.Type

/** One event on its way to one webhook: the outbox row the delivery engine works from. */
export interface DeliveryRecord {
  readonly id: DeliveryId
  readonly account_id: AccountId
  readonly event_id: EventId
  readonly webhook_id: WebhookId
  readonly status: DeliveryStatus
  /** Attempts made so far. */
  readonly attempts: number
  /** When the next attempt is due; null once the delivery is settled. */
  readonly next_attempt_at: Timestamp | null
  readonly created_at: Timestamp
  readonly updated_at: Timestamp
}
