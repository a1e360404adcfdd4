import { Context, type Effect } from "effect"
import type { StorageError } from "../kernel/errors.js"
import type { AccountId } from "../kernel/ids.js"
import type { Page, PageOf } from "../kernel/paging.js"
import type { Timestamp } from "../kernel/time.js"
import type { AuditEntryRecord, AuditLogFilter } from "./entry.js"

/**
 * The audit log: append-only. Entries are inserted in the transaction of the change they record
 * and never updated; the only removal is retention's.
 */
export class AuditRepo extends Context.Tag("@mzk/core/AuditRepo")<AuditRepo, {
  readonly insert: (entry: AuditEntryRecord) => Effect.Effect<void, StorageError>
  /** The account's entries in the page's order, filtered; `total` counts the filtered set. */
  readonly list: (accountId: AccountId, query: Page & AuditLogFilter) => Effect.Effect<PageOf<AuditEntryRecord>, StorageError>
  /** Deletes up to `limit` entries (of any account) created before `before`, oldest first; returns how many. */
  readonly deleteBefore: (before: Timestamp, limit: number) => Effect.Effect<number, StorageError>
}>() {}
