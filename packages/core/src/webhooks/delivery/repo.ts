import { Context, type Effect, type Option } from "effect"
import type { StorageError } from "../../kernel/errors.js"
import type { AccountId, DeliveryId, EventId, WebhookId } from "../../kernel/ids.js"
import type { Page, PageOf } from "../../kernel/paging.js"
import type { Timestamp } from "../../kernel/time.js"
import type { DeliveryAfterAttempt, DeliveryAttemptRecord, DeliveryRecord } from "./delivery.js"

/**
 * The delivery outbox and its attempt log. Every write the delivery engine makes is conditional on
 * the lease it holds (`lease_expires_at` as the engine's claim set it), so a process whose lease
 * ran out and was taken over can no longer change the delivery. Each method is one statement, or
 * one short transaction, in SQL.
 */
export class DeliveriesRepo extends Context.Tag("@mzk/core/DeliveriesRepo")<DeliveriesRepo, {
  readonly insertMany: (deliveries: ReadonlyArray<DeliveryRecord>) => Effect.Effect<void, StorageError>
  /** Deliveries of one event, in id order. */
  readonly listByEvent: (eventId: EventId) => Effect.Effect<ReadonlyArray<DeliveryRecord>, StorageError>
  /**
   * Claims up to `limit` due deliveries: status `pending`, `next_attempt_at <= now`, lease null or
   * `<= now`, webhook not in `excludeWebhooks`; of each webhook only its `maxPerWebhook` earliest.
   * They are taken in turns across accounts (`takeInTurns`, earliest `next_attempt_at` then id
   * within an account): an account that holds `heldByAccount` attempts already goes after those
   * holding fewer, and gets none that would take it to `maxPerAccount` or past it, so one account's
   * backlog never holds another's first delivery back. Without `maxPerAccount`, no account cap and
   * nothing held. Sets `lease_expires_at = leaseUntil` and
   * `updated_at = now` on each and returns them as updated. Atomic across processes: while a lease
   * holds, no other claim returns that delivery (Postgres: `FOR UPDATE SKIP LOCKED`, or a
   * `row_number() OVER (PARTITION BY webhook_id …)` pick followed by an `UPDATE … WHERE` that
   * re-checks the lease; SQLite: one `UPDATE … RETURNING` under the write lock).
   */
  readonly claimDue: (claim: {
    readonly now: Timestamp
    readonly limit: number
    readonly maxPerWebhook: number
    readonly leaseUntil: Timestamp
    readonly excludeWebhooks: ReadonlyArray<WebhookId>
    readonly maxPerAccount?: number
    /** What each account holds in the claiming engine (in flight or claimed and waiting); absent means none. */
    readonly heldByAccount?: ReadonlyMap<AccountId, number>
  }) => Effect.Effect<ReadonlyArray<DeliveryRecord>, StorageError>
  /**
   * Writes one attempt and the delivery's next state together, only when the delivery is still
   * `pending`, its `lease_expires_at` equals `lease` and `attempts = attempt.attempt - 1`. It then
   * sets `attempts = attempt.attempt`, `status`, `next_attempt_at` and `first_failed_at` from
   * `after`, `last_attempt_at = updated_at = attempt.attempted_at`, `lease_expires_at = null`, and
   * inserts the attempt row. True when it wrote; false, with nothing written, otherwise.
   */
  readonly recordAttempt: (
    attempt: DeliveryAttemptRecord,
    after: DeliveryAfterAttempt,
    lease: Timestamp
  ) => Effect.Effect<boolean, StorageError>
  /** Hands a claimed delivery back untouched (`lease_expires_at = null`) while still `pending` under `lease`. */
  readonly release: (id: DeliveryId, lease: Timestamp) => Effect.Effect<boolean, StorageError>
  /**
   * Cancels a claimed delivery without an attempt (its webhook is gone or inactive), while still
   * `pending` under `lease`: `status = cancelled`, `next_attempt_at` and lease null, `updated_at = at`.
   */
  readonly cancel: (id: DeliveryId, lease: Timestamp, at: Timestamp) => Effect.Effect<boolean, StorageError>
  /** Cancels every `pending` delivery of the webhook, leased or not, as `cancel` does. Returns how many. */
  readonly cancelPendingForWebhook: (webhookId: WebhookId, at: Timestamp) => Effect.Effect<number, StorageError>
  /**
   * The earliest instant a `pending` delivery outside `excludeWebhooks` and `excludeAccounts`
   * becomes claimable: the minimum of `max(next_attempt_at, coalesce(lease_expires_at,
   * next_attempt_at))`. None when there is no such delivery. The engine sleeps until then instead
   * of polling; it leaves out what it could not claim now (webhooks and accounts at their caps).
   */
  readonly nextDueAt: (
    excludeWebhooks: ReadonlyArray<WebhookId>,
    excludeAccounts?: ReadonlyArray<AccountId>
  ) => Effect.Effect<Option.Option<Timestamp>, StorageError>
  /** One delivery of the account. */
  readonly get: (accountId: AccountId, id: DeliveryId) => Effect.Effect<Option.Option<DeliveryRecord>, StorageError>
  /**
   * Queues a settled delivery (`succeeded`, `failed` or `cancelled`) for one manual attempt now:
   * `status = pending`, `trigger = manual`, `next_attempt_at = at`, no lease, `updated_at = at`;
   * its attempts, `first_failed_at` and attempt log stay. Returns it as updated; none, with nothing
   * written, when it is pending already or does not exist.
   */
  readonly requeue: (id: DeliveryId, at: Timestamp) => Effect.Effect<Option.Option<DeliveryRecord>, StorageError>
  /**
   * One batch of a recovery: of the webhook's `failed` and `cancelled` deliveries created from
   * `since` up to `until`, with an id after `after` (from the first when null), the first `limit`
   * in id order are queued as `requeue` does. Returns how many it looked at, the last id it looked
   * at (where the next batch starts), and how many it queued.
   */
  readonly requeueFailed: (batch: {
    readonly webhookId: WebhookId
    readonly since: Timestamp
    readonly until: Timestamp
    readonly after: DeliveryId | null
    readonly limit: number
    readonly at: Timestamp
  }) => Effect.Effect<{ readonly scanned: number; readonly last: DeliveryId | null; readonly requeued: number }, StorageError>
  /** The attempts on one webhook of the account, in id order (which is attempt-time order). */
  readonly listAttempts: (
    accountId: AccountId,
    webhookId: WebhookId,
    page: Page
  ) => Effect.Effect<PageOf<DeliveryAttemptRecord>, StorageError>
}>() {}
