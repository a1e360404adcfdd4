import { Context, type Effect, type Option } from "effect"
import type { EventType } from "../../events/event.js"
import type { StorageError, WebhookLimitReached } from "../../kernel/errors.js"
import type { AccountId, WebhookId } from "../../kernel/ids.js"
import type { Page, PageOf } from "../../kernel/paging.js"
import type { Timestamp } from "../../kernel/time.js"
import type { WebhookChanges, WebhookRecord } from "./webhook.js"

export class WebhooksRepo extends Context.Tag("@mzk/core/WebhooksRepo")<WebhooksRepo, {
  /** Inserts unless the account already has `maxPerAccount` webhooks; atomic. */
  readonly insert: (webhook: WebhookRecord, limits: { readonly maxPerAccount: number }) => Effect.Effect<void, WebhookLimitReached | StorageError>
  readonly get: (accountId: AccountId, id: WebhookId) => Effect.Effect<Option.Option<WebhookRecord>, StorageError>
  /** The account's webhooks, in id order. */
  readonly list: (accountId: AccountId, page: Page) => Effect.Effect<PageOf<WebhookRecord>, StorageError>
  readonly update: (accountId: AccountId, id: WebhookId, changes: WebhookChanges, at: Timestamp) => Effect.Effect<Option.Option<WebhookRecord>, StorageError>
  /** True when a webhook was removed. */
  readonly remove: (accountId: AccountId, id: WebhookId) => Effect.Effect<boolean, StorageError>
  /**
   * Makes `secret` the webhook's signing secret, and the secret it replaces its previous one until
   * `previousUntil` (null: the replaced secret is dropped); any older previous secret is dropped.
   * Unless `force`, only while no previous secret is live at `now` (`previous_secret_expires_at`
   * null or `<= now`), as one conditional write, so of concurrent rotations only one passes. Sets
   * `updated_at = now`. Returns the webhook as updated, or none: unknown, another account's, or
   * (without `force`) in an overlap.
   */
  readonly rotateSecret: (
    accountId: AccountId,
    id: WebhookId,
    rotation: { readonly secret: string; readonly previousUntil: Timestamp | null; readonly now: Timestamp; readonly force: boolean }
  ) => Effect.Effect<Option.Option<WebhookRecord>, StorageError>
  /** Active webhooks of the account subscribed to `type`: the fan-out targets of a new event. */
  readonly listSubscribed: (accountId: AccountId, type: EventType) => Effect.Effect<ReadonlyArray<WebhookRecord>, StorageError>
}>() {}
