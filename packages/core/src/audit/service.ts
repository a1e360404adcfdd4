import { Context, Effect, Layer } from "effect"
import type { InvalidRequest, StorageError } from "../kernel/errors.js"
import { type AccountId, Ids } from "../kernel/ids.js"
import { pageOf } from "../kernel/paging.js"
import { deleteInBatches, sweepForever } from "../kernel/sweep.js"
import { millisFromTimestamp, now, timestampFromMillis } from "../kernel/time.js"
import { AuditConfig } from "./config.js"
import { currentRequest } from "../kernel/requestContext.js"
import { type AuditAction, type AuditEntry, type AuditEntryRecord, type AuditTarget, type ListAuditLogQuery, toAuditEntry } from "./entry.js"
import { AuditRepo } from "./repo.js"

export interface AuditLogPage {
  readonly entries: ReadonlyArray<AuditEntry>
  readonly total: number
  readonly has_more: boolean
}

/**
 * The account's audit log. Services call `record` inside the transaction of the change it
 * describes, so an entry exists exactly when its change committed; who made the change and from
 * where come from the `RequestContext` of the request (`system` where there is none).
 */
export class AuditLog extends Context.Tag("@mzk/core/AuditLog")<AuditLog, {
  readonly record: (
    accountId: AccountId,
    action: AuditAction,
    target: AuditTarget,
    changes?: AuditEntry["changes"]
  ) => Effect.Effect<void, StorageError>
  /** Newest first. */
  readonly list: (accountId: AccountId, query: ListAuditLogQuery) => Effect.Effect<AuditLogPage, InvalidRequest | StorageError>
}>() {
  static readonly layer = Layer.effect(
    this,
    Effect.gen(function*() {
      const repo = yield* AuditRepo
      const ids = yield* Ids

      const record = (accountId: AccountId, action: AuditAction, target: AuditTarget, changes: AuditEntry["changes"] = null) =>
        Effect.gen(function*() {
          const by = yield* currentRequest
          const entry: AuditEntryRecord = {
            id: yield* ids.make("audit"),
            account_id: accountId,
            action,
            actor: by.actor,
            target,
            request_id: by.request_id,
            ip_address: by.client_address,
            user_agent: by.user_agent,
            changes,
            created_at: yield* now
          }
          yield* repo.insert(entry)
        })

      const list = (accountId: AccountId, { action, actor_id, target_id, ...page }: ListAuditLogQuery) =>
        Effect.map(
          Effect.flatMap(pageOf(page), (paged) => repo.list(accountId, { ...paged, action, actor_id, target_id })),
          (found) => ({ entries: found.items.map(toAuditEntry), total: found.total, has_more: found.has_more })
        )

      return { record, list }
    })
  )
}

const SWEEP_BATCH = 1_000

/** Deletes the entries past retention, a batch at a time so no statement runs long; returns how many. */
export const sweepAuditLog = Effect.gen(function*() {
  const repo = yield* AuditRepo
  const { retentionMs } = yield* AuditConfig
  const before = timestampFromMillis(millisFromTimestamp(yield* now) - retentionMs)
  return yield* deleteInBatches(repo.deleteBefore, before, SWEEP_BATCH)
})

/** Audit retention as a background loop (in `CoreLoops`): a sweep at start, then every `sweepIntervalMs`. */
export const AuditRetentionSweeper = Layer.scopedDiscard(
  Effect.flatMap(AuditConfig, (config) => sweepForever("audit log retention sweep", sweepAuditLog, config.sweepIntervalMs))
)
