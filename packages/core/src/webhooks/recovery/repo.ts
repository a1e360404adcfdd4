import { Context, type Effect, type Option } from "effect"
import type { StorageError } from "../../kernel/errors.js"
import type { AccountId, RecoveryId, WebhookId } from "../../kernel/ids.js"
import type { Page, PageOf } from "../../kernel/paging.js"
import type { Timestamp } from "../../kernel/time.js"
import type { RecoveryProgress, RecoveryRecord } from "./recovery.js"

/**
 * Webhook recoveries and their job queue: a recovery is `running` until its batches are done, each
 * batch run under a short lease (claimed, advanced, the lease cleared), so several workers never
 * run the same batch and a worker that dies mid-batch only delays it until the lease lapses.
 */
export class RecoveriesRepo extends Context.Tag("@mzk/core/RecoveriesRepo")<RecoveriesRepo, {
  readonly insert: (recovery: RecoveryRecord) => Effect.Effect<void, StorageError>
  readonly get: (accountId: AccountId, webhookId: WebhookId, id: RecoveryId) => Effect.Effect<Option.Option<RecoveryRecord>, StorageError>
  /** The webhook's recoveries, in id order (`page.order`). */
  readonly list: (accountId: AccountId, webhookId: WebhookId, page: Page) => Effect.Effect<PageOf<RecoveryRecord>, StorageError>
  /**
   * Claims up to `limit` `running` recoveries with no lease or a lapsed one, least recently
   * advanced (`updated_at`, then id) first, setting `lease_expires_at = leaseUntil`. Concurrent
   * claims never return the same recovery.
   */
  readonly claim: (request: {
    readonly now: Timestamp
    readonly leaseUntil: Timestamp
    readonly limit: number
  }) => Effect.Effect<ReadonlyArray<RecoveryRecord>, StorageError>
  /**
   * Records a batch's progress and clears the lease, only while the recovery is `running` under
   * `lease`. True when it wrote.
   */
  readonly advance: (id: RecoveryId, lease: Timestamp, progress: RecoveryProgress) => Effect.Effect<boolean, StorageError>
  /** Hands a claimed recovery back untouched (no lease) while `running` under `lease`. */
  readonly release: (id: RecoveryId, lease: Timestamp) => Effect.Effect<boolean, StorageError>
  /** Retention: deletes up to `limit` completed or cancelled recoveries that ended before `before`; returns how many. */
  readonly deleteEnded: (before: Timestamp, limit: number) => Effect.Effect<number, StorageError>
}>() {}
