import { Schema } from "effect"
import { AccountId, DeliveryId, RecoveryId, WebhookId } from "../../kernel/ids.js"
import { pageQuery } from "../../kernel/paging.js"
import { Timestamp } from "../../kernel/time.js"

export const RecoveryStatus = Schema.Literal("running", "completed", "cancelled")
export type RecoveryStatus = typeof RecoveryStatus.Type

/**
 * A recovery of a webhook, as the API shows it: the background job that re-queues the webhook's
 * failed deliveries (and those cancelled when it was switched off) created from `since` until the
 * recovery was asked for, each for one manual attempt.
 */
export const Recovery = Schema.Struct({
  id: RecoveryId,
  webhook_id: WebhookId,
  status: RecoveryStatus.annotations({
    description: "`running` while it re-queues, a batch at a time; `completed`; or `cancelled` when the webhook was " +
      "switched off or removed first"
  }),
  since: Timestamp.annotations({ description: "Deliveries created at or after this time are recovered" }),
  until: Timestamp.annotations({ description: "…and at or before this one: when the recovery was asked for" }),
  requeued: Schema.Int.annotations({ description: "Deliveries re-queued so far; each is attempted once more, as `trigger: manual`" }),
  created_at: Timestamp,
  completed_at: Schema.NullOr(Timestamp).annotations({ description: "When it completed or was cancelled; null while running" })
}).annotations({ identifier: "Recovery" })
export type Recovery = typeof Recovery.Type

export interface RecoveryRecord extends Recovery {
  readonly account_id: AccountId
  /** The last delivery it has looked at: the next batch starts after it, so no delivery is re-queued twice. */
  readonly cursor: DeliveryId | null
  /** Set while a worker holds the recovery for a batch; also the fence of that worker's write. */
  readonly lease_expires_at: Timestamp | null
  /** When its last batch ran: claims take the least recently advanced first, so recoveries take turns. */
  readonly updated_at: Timestamp
}

export const toRecovery = (record: RecoveryRecord): Recovery => ({
  id: record.id,
  webhook_id: record.webhook_id,
  status: record.status,
  since: record.since,
  until: record.until,
  requeued: record.requeued,
  created_at: record.created_at,
  completed_at: record.completed_at
})

/** What a batch of a recovery did and where it leaves the recovery. */
export interface RecoveryProgress {
  readonly status: RecoveryStatus
  readonly cursor: DeliveryId | null
  readonly requeued: number
  readonly completed_at: Timestamp | null
  readonly updated_at: Timestamp
}

export const RecoverWebhookInput = Schema.Struct({
  since: Timestamp.annotations({
    description: "Recover the deliveries created at or after this time (ISO 8601 UTC), no earlier than the event retention window (30 days by default)"
  })
}).annotations({ identifier: "RecoverWebhookInput" })
export type RecoverWebhookInput = typeof RecoverWebhookInput.Type

/** A webhook's recoveries, newest first; the cursor a recovery id. */
export const ListRecoveriesQuery = pageQuery(RecoveryId)
