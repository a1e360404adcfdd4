import { Context, Effect, FiberRef, type Option } from "effect"
import type { Account } from "../domain/account.js"
import type { ApiKeyRecord } from "../domain/apiKey.js"
import type { DeliveryRecord } from "../domain/delivery.js"
import type { EventRecord, EventType } from "../domain/event.js"
import type { WebhookChanges, WebhookRecord } from "../domain/webhook.js"
import type { KeyLimitReached, StorageError, WebhookLimitReached } from "../errors.js"
import type { AccountId, EventId, KeyId, WebhookId } from "../ids.js"
import type { Timestamp } from "../time.js"
import type { ProofsRepo } from "./proofStorage.js"

/**
 * The storage ports. One repository per aggregate plus `Transactor`. Repository calls made inside
 * `transaction` join it (adapters carry the open transaction in a FiberRef), so a state change and
 * the events and deliveries it causes commit or roll back together: the transactional outbox.
 *
 * Limits that must hold under concurrency (active keys, webhooks, rate counters) are part of the
 * repository contract, not checked by the caller with a read, because only storage can make
 * "count then insert" atomic across processes.
 */
export class Transactor extends Context.Tag("@mzk/core/Transactor")<Transactor, {
  /** Runs `effect` in one transaction; joins the current one when already inside. */
  readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | StorageError, R>
  /**
   * Runs `effect` once the outermost transaction around the caller has committed: at once outside
   * a transaction, never if it rolls back. For in-process nudges (wake a loop), which must not run
   * before the work they announce is visible to the loop's own queries.
   */
  readonly afterCommit: (effect: Effect.Effect<void>) => Effect.Effect<void>
}>() {}

/**
 * After-commit bookkeeping for a store that has no transaction state of its own to keep it in (the
 * memory store): `afterCommit` for the port, and `collect` to wrap the outermost transaction (the
 * whole of it, commit included), which runs the hooks registered inside it once it has succeeded.
 * The SQL adapter keeps the hooks with its open transaction instead.
 */
export const makeCommitHooks = () => {
  const pending = FiberRef.unsafeMake<Array<Effect.Effect<void>> | undefined>(undefined)
  const afterCommit = (effect: Effect.Effect<void>): Effect.Effect<void> =>
    Effect.flatMap(FiberRef.get(pending), (hooks) => (hooks === undefined ? effect : Effect.sync(() => void hooks.push(effect))))
  const collect = <A, E, R>(transaction: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.suspend(() => {
      const hooks: Array<Effect.Effect<void>> = []
      return Effect.locally(transaction, pending, hooks).pipe(Effect.tap(() => Effect.forEach(hooks, (hook) => hook, { discard: true })))
    })
  return { afterCommit, collect }
}

/** Lists are in id order, which is creation order: ids begin with their creation time. */
export interface Page {
  readonly limit: number
  /** Return rows whose id sorts after this one. */
  readonly startingAfter?: string | undefined
}
export interface PageOf<A> {
  readonly items: ReadonlyArray<A>
  readonly total: number
  readonly has_more: boolean
}

export class AccountsRepo extends Context.Tag("@mzk/core/AccountsRepo")<AccountsRepo, {
  readonly insert: (account: Account) => Effect.Effect<void, StorageError>
  readonly get: (id: AccountId) => Effect.Effect<Option.Option<Account>, StorageError>
}>() {}

export class KeysRepo extends Context.Tag("@mzk/core/KeysRepo")<KeysRepo, {
  /** Inserts an active key unless the account already has `maxActive` active keys; atomic. */
  readonly insert: (key: ApiKeyRecord, limits: { readonly maxActive: number }) => Effect.Effect<void, KeyLimitReached | StorageError>
  /** The key with this SHA-256, active or revoked. */
  readonly findByHash: (hash: string) => Effect.Effect<Option.Option<ApiKeyRecord>, StorageError>
  /** Active keys of the account, in id order. */
  readonly listActive: (accountId: AccountId) => Effect.Effect<ReadonlyArray<ApiKeyRecord>, StorageError>
  /** Revokes an active key of the account; none when it is unknown, another account's or already revoked. */
  readonly revoke: (accountId: AccountId, id: KeyId, at: Timestamp) => Effect.Effect<Option.Option<ApiKeyRecord>, StorageError>
  /**
   * Sets `last_used_at = at` only when it is null or earlier than `staleBefore`, as one atomic
   * write, so concurrent requests write it at most once per interval. True when it wrote.
   */
  readonly touch: (id: KeyId, at: Timestamp, staleBefore: Timestamp) => Effect.Effect<boolean, StorageError>
}>() {}

export class WebhooksRepo extends Context.Tag("@mzk/core/WebhooksRepo")<WebhooksRepo, {
  /** Inserts unless the account already has `maxPerAccount` webhooks; atomic. */
  readonly insert: (webhook: WebhookRecord, limits: { readonly maxPerAccount: number }) => Effect.Effect<void, WebhookLimitReached | StorageError>
  readonly get: (accountId: AccountId, id: WebhookId) => Effect.Effect<Option.Option<WebhookRecord>, StorageError>
  /** The account's webhooks, in id order. */
  readonly list: (accountId: AccountId, page: Page) => Effect.Effect<PageOf<WebhookRecord>, StorageError>
  readonly update: (accountId: AccountId, id: WebhookId, changes: WebhookChanges, at: Timestamp) => Effect.Effect<Option.Option<WebhookRecord>, StorageError>
  /** True when a webhook was removed. */
  readonly remove: (accountId: AccountId, id: WebhookId) => Effect.Effect<boolean, StorageError>
  /** Active webhooks of the account subscribed to `type`: the fan-out targets of a new event. */
  readonly listSubscribed: (accountId: AccountId, type: EventType) => Effect.Effect<ReadonlyArray<WebhookRecord>, StorageError>
}>() {}

export class EventsRepo extends Context.Tag("@mzk/core/EventsRepo")<EventsRepo, {
  readonly insert: (event: EventRecord) => Effect.Effect<void, StorageError>
  readonly get: (id: EventId) => Effect.Effect<Option.Option<EventRecord>, StorageError>
  /** The account's events, in id order. */
  readonly list: (accountId: AccountId, page: Page) => Effect.Effect<PageOf<EventRecord>, StorageError>
}>() {}

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
   * `<= now`, webhook not in `excludeWebhooks`; of each webhook only its `maxPerWebhook` earliest;
   * earliest `next_attempt_at` first, then id. Sets `lease_expires_at = leaseUntil` and
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
  }) => Effect.Effect<ReadonlyArray<DeliveryRecord>, StorageError>
  /**
   * Writes one attempt and the delivery's next state together, only when the delivery is still
   * `pending`, its `lease_expires_at` equals `lease` and `attempts = attempt.attempt - 1`. It then
   * sets `attempts = attempt.attempt`, `status`, `next_attempt_at` and `first_failed_at` from
   * `after`, `last_attempt_at = updated_at = attempt.attempted_at`, `lease_expires_at = null`, and
   * inserts the attempt row. True when it wrote; false, with nothing written, otherwise.
   */
  readonly recordAttempt: (
    attempt: import("../domain/delivery.js").DeliveryAttemptRecord,
    after: import("../domain/delivery.js").DeliveryAfterAttempt,
    lease: Timestamp
  ) => Effect.Effect<boolean, StorageError>
  /** Hands a claimed delivery back untouched (`lease_expires_at = null`) while still `pending` under `lease`. */
  readonly release: (id: import("../ids.js").DeliveryId, lease: Timestamp) => Effect.Effect<boolean, StorageError>
  /**
   * Cancels a claimed delivery without an attempt (its webhook is gone or inactive), while still
   * `pending` under `lease`: `status = cancelled`, `next_attempt_at` and lease null, `updated_at = at`.
   */
  readonly cancel: (id: import("../ids.js").DeliveryId, lease: Timestamp, at: Timestamp) => Effect.Effect<boolean, StorageError>
  /** Cancels every `pending` delivery of the webhook, leased or not, as `cancel` does. Returns how many. */
  readonly cancelPendingForWebhook: (webhookId: WebhookId, at: Timestamp) => Effect.Effect<number, StorageError>
  /**
   * The earliest instant a `pending` delivery outside `excludeWebhooks` becomes claimable: the
   * minimum of `max(next_attempt_at, coalesce(lease_expires_at, next_attempt_at))`. None when
   * there is no such delivery. The engine sleeps until then instead of polling.
   */
  readonly nextDueAt: (excludeWebhooks: ReadonlyArray<WebhookId>) => Effect.Effect<Option.Option<Timestamp>, StorageError>
  /** The attempts on one webhook of the account, in id order (which is attempt-time order). */
  readonly listAttempts: (
    accountId: AccountId,
    webhookId: WebhookId,
    page: Page
  ) => Effect.Effect<PageOf<import("../domain/delivery.js").DeliveryAttemptRecord>, StorageError>
}>() {}

/** One fixed-window counter to charge: `bucket` names it, `window_start` (epoch ms) dates it. */
export interface RateBucket {
  readonly bucket: string
  readonly window_start: number
  readonly limit: number
  readonly cost: number
}

export interface RateConsumeResult {
  /** True when every bucket had room and all were charged; false when none was. */
  readonly admitted: boolean
  /** Per bucket, in order: the count in the current window after the call. */
  readonly counts: ReadonlyArray<number>
}

export class RateLimitsRepo extends Context.Tag("@mzk/core/RateLimitsRepo")<RateLimitsRepo, {
  /**
   * Charges every bucket, all or nothing and atomically: a bucket whose stored window is older
   * than `window_start` starts again from zero; one whose stored window is newer (another
   * process's clock runs ahead) is charged in that newer window. Exact under any concurrency.
   */
  readonly consume: (buckets: ReadonlyArray<RateBucket>) => Effect.Effect<RateConsumeResult, StorageError>
}>() {}

/** Everything a store layer provides. */
export type Storage = Transactor | AccountsRepo | KeysRepo | WebhooksRepo | EventsRepo | DeliveriesRepo | RateLimitsRepo | ProofsRepo
