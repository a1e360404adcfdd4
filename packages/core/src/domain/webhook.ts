import { Schema } from "effect"
import { AccountId, WebhookId } from "../ids.js"
import { Timestamp } from "../time.js"
import { EventType } from "./event.js"

export const DisabledReason = Schema.Literal("delivery_failures")

/** A webhook as clients see it after create: never the secret. */
export const Webhook = Schema.Struct({
  id: WebhookId,
  url: Schema.String,
  events: Schema.Array(EventType),
  description: Schema.NullOr(Schema.String),
  active: Schema.Boolean,
  disabled_reason: Schema.NullOr(DisabledReason),
  created_at: Timestamp,
  updated_at: Timestamp
}).annotations({ identifier: "Webhook" })
export type Webhook = typeof Webhook.Type

export interface WebhookRecord extends Webhook {
  readonly account_id: AccountId
  /** `whsec_…`: kept readable because every delivery is signed with it. */
  readonly secret: string
}

/** The fields an update may change (PATCH semantics: absent means unchanged). */
export interface WebhookChanges {
  readonly url?: string
  readonly events?: ReadonlyArray<EventType>
  readonly description?: string | null
  readonly active?: boolean
  readonly disabled_reason?: typeof DisabledReason.Type | null
}

export const toWebhook = (record: WebhookRecord): Webhook => ({
  id: record.id,
  url: record.url,
  events: record.events,
  description: record.description,
  active: record.active,
  disabled_reason: record.disabled_reason,
  created_at: record.created_at,
  updated_at: record.updated_at
})
