import { Schema } from "effect"
import { AccountId, WebhookId } from "../../kernel/ids.js"
import { type MetadataPatch, MetadataField, MetadataInput } from "../../kernel/metadata.js"
import { pageQuery } from "../../kernel/paging.js"
import { StoredText, TextWithoutControls } from "../../kernel/text.js"
import { Timestamp } from "../../kernel/time.js"
import { EventType, SubscribableEventType } from "../../events/event.js"

/**
 * Why mzk switched a webhook off: every attempt of a delivery failed (`delivery_failures`), or the
 * endpoint answered `410 Gone` (`endpoint_gone`), which says it will never accept deliveries again.
 */
export const DisabledReason = Schema.Literal("delivery_failures", "endpoint_gone")
export type DisabledReason = typeof DisabledReason.Type

/** A webhook as clients see it after create: never the secret. */
export const Webhook = Schema.Struct({
  id: WebhookId,
  url: Schema.String,
  events: Schema.Array(EventType),
  description: Schema.NullOr(Schema.String),
  active: Schema.Boolean,
  disabled_reason: Schema.NullOr(DisabledReason).annotations({
    description: "Why mzk turned it off: every attempt of a delivery failed (`delivery_failures`), or the endpoint answered " +
      "410 Gone (`endpoint_gone`); null while active or turned off by the account"
  }),
  previous_secret_expires_at: Schema.NullOr(Timestamp).annotations({
    description: "When the signing secret replaced by the last rotation stops (or stopped) signing deliveries, which carry a " +
      "signature with each live secret until then; null when the secret was never rotated, or the last rotation kept no overlap"
  }),
  created_at: Timestamp,
  updated_at: Timestamp,
  metadata: MetadataField
}).annotations({ identifier: "Webhook" })
export type Webhook = typeof Webhook.Type

export interface WebhookRecord extends Webhook {
  readonly account_id: AccountId
  /** `whsec_…`: kept readable because every delivery is signed with it. */
  readonly secret: string
  /**
   * The secret the last rotation replaced, still signing deliveries until
   * `previous_secret_expires_at`; null when that rotation kept no overlap. Kept after it expires
   * (it then signs nothing) until the next rotation replaces it.
   */
  readonly previous_secret: string | null
}

/** The fields an update may change (PATCH semantics: absent means unchanged). */
export interface WebhookChanges {
  readonly url?: string
  readonly events?: ReadonlyArray<SubscribableEventType>
  readonly description?: string | null
  readonly active?: boolean
  readonly disabled_reason?: DisabledReason | null
  /** Laid over the stored metadata in the same write: a key with null is deleted. */
  readonly metadata?: MetadataPatch
}

export const toWebhook = (record: WebhookRecord): Webhook => ({
  id: record.id,
  url: record.url,
  events: record.events,
  description: record.description,
  active: record.active,
  disabled_reason: record.disabled_reason,
  previous_secret_expires_at: record.previous_secret_expires_at,
  created_at: record.created_at,
  updated_at: record.updated_at,
  metadata: record.metadata
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
  active: Schema.optionalWith(Schema.Boolean.annotations({ description: "Default true" }), { exact: true }),
  metadata: Schema.optionalWith(MetadataInput, { exact: true })
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
  ),
  metadata: Schema.optionalWith(
    MetadataInput.annotations({
      description: "Merged into the webhook's metadata: a key with a value is set, a key with \"\" is deleted, keys not sent " +
        "are kept; at most 50 keys after the merge"
    }),
    { exact: true }
  )
}).annotations({ identifier: "UpdateWebhookInput" })
export type UpdateWebhookInput = typeof UpdateWebhookInput.Type

/** A webhook listing's query: its page, the cursor a webhook id. */
export const ListWebhooksQuery = pageQuery(WebhookId)

/** The overlap a rotation gives the replaced secret unless told otherwise: 24 hours. */
export const DEFAULT_SECRET_OVERLAP_SECONDS = 86_400

/**
 * Longest overlap a rotation may give the replaced secret: 7 days, as Stripe's roll of a webhook
 * secret allows; past that a receiver is not moving over, and two secrets would sign for ever.
 */
export const MAX_SECRET_OVERLAP_SECONDS = 7 * 86_400

/** The body of a secret rotation request. */
export const RotateWebhookSecretInput = Schema.Struct({
  expires_in: Schema.optionalWith(
    Schema.Int.pipe(
      Schema.between(0, MAX_SECRET_OVERLAP_SECONDS, {
        message: () => `expires_in must be whole seconds from 0 to ${MAX_SECRET_OVERLAP_SECONDS}`
      })
    ).annotations({
      description: "Seconds the replaced secret keeps signing deliveries beside the new one (default 86400, 24 h; 0 stops it now)"
    }),
    { exact: true }
  ),
  force: Schema.optionalWith(
    Schema.Boolean.annotations({
      description: "Rotate even while an earlier rotation's overlap lasts: the secret that rotation replaced stops signing at " +
        "once, so at most two secrets ever sign (default false: 409 `secret_rotation_in_progress`)"
    }),
    { exact: true }
  )
}).annotations({ identifier: "RotateWebhookSecretInput" })
export type RotateWebhookSecretInput = typeof RotateWebhookSecretInput.Type

/** `data` of `webhook.test`: which webhook is tested, so a receiver shared by several can tell. */
export const WebhookTestData = Schema.Struct({
  webhook_id: WebhookId,
  message: Schema.String,
  metadata: MetadataField.annotations({ description: "The tested webhook's metadata" })
})
