import { Schema } from "effect"
import { AccountId, WebhookId } from "../kernel/ids.js"
import { pageQuery } from "../kernel/paging.js"
import { StoredText, TextWithoutControls } from "../kernel/text.js"
import { Timestamp } from "../kernel/time.js"
import { EventType, SubscribableEventType } from "../events/event.js"

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
  readonly events?: ReadonlyArray<SubscribableEventType>
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

const WebhookUrlText = TextWithoutControls.pipe(
  Schema.minLength(1, { message: () => "url is required" }),
  Schema.maxLength(2048, { message: () => "url must be at most 2048 characters" })
)
const WebhookEvents = Schema.Array(SubscribableEventType).pipe(
  Schema.minItems(1, { message: () => "events must name at least one event type" }),
  Schema.filter((types) => new Set(types).size === types.length || "events must not repeat an event type")
)
const WebhookDescription = StoredText.pipe(
  Schema.maxLength(1024, { message: () => "description must be at most 1024 characters" })
)

export const CreateWebhookInput = Schema.Struct({
  url: WebhookUrlText,
  events: WebhookEvents,
  description: Schema.optionalWith(Schema.NullOr(WebhookDescription), { exact: true }),
  active: Schema.optionalWith(Schema.Boolean, { exact: true })
}).annotations({ identifier: "CreateWebhookInput" })
export type CreateWebhookInput = typeof CreateWebhookInput.Type

/**
 * PATCH: every field optional, absent means unchanged. `recover_since` goes with `active: true`:
 * re-enabling also starts a recovery of what failed since then (Svix's recover on re-enable).
 */
export const UpdateWebhookInput = Schema.Struct({
  url: Schema.optionalWith(WebhookUrlText, { exact: true }),
  events: Schema.optionalWith(WebhookEvents, { exact: true }),
  description: Schema.optionalWith(Schema.NullOr(WebhookDescription), { exact: true }),
  active: Schema.optionalWith(Schema.Boolean, { exact: true }),
  recover_since: Schema.optionalWith(
    Timestamp.annotations({
      description: "With `active: true`: also re-queue the webhook's failed deliveries created since this time, " +
        "as `POST /webhooks/{id}/recover` does (within the event retention window)"
    }),
    { exact: true }
  )
}).annotations({ identifier: "UpdateWebhookInput" })
export type UpdateWebhookInput = typeof UpdateWebhookInput.Type

/** A webhook listing's query: its page, the cursor a webhook id. */
export const ListWebhooksQuery = pageQuery(WebhookId)

/** `data` of `webhook.test`: which webhook is tested, so a receiver shared by several can tell. */
export const WebhookTestData = Schema.Struct({
  webhook_id: WebhookId,
  message: Schema.String
})
