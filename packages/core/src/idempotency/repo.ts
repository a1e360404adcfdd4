import { Context, type Effect, type Option } from "effect"
import type { StorageError } from "../kernel/errors.js"
import type { AccountId } from "../kernel/ids.js"
import type { Timestamp } from "../kernel/time.js"
import type { IdempotencyRecord, StoredResponse } from "./record.js"

/** The account's idempotency keys: one record per (account, key), claimed by one request at a time. */
export class IdempotencyRepo extends Context.Tag("@mzk/core/IdempotencyRepo")<IdempotencyRepo, {
  /**
   * Claims the record's (account, key) for its request, atomically: stores `record` (in flight)
   * when the key is new, expired (`expires_at <= now`), or in flight under a lapsed lock
   * (`locked_until <= now`), and returns none; otherwise returns the record that holds the key.
   * Of concurrent claims of one key, in any number of processes, exactly one gets none.
   */
  readonly claim: (record: IdempotencyRecord, now: Timestamp) => Effect.Effect<Option.Option<IdempotencyRecord>, StorageError>
  /** Stores the response of the request that claimed the key, only while it still holds it. True when stored. */
  readonly settle: (accountId: AccountId, key: string, requestId: string, response: StoredResponse) => Effect.Effect<boolean, StorageError>
  /** Frees the key of an in-flight request whose result is not kept (a 429, a stopped server). True when freed. */
  readonly release: (accountId: AccountId, key: string, requestId: string) => Effect.Effect<boolean, StorageError>
  /** Deletes the records that expired by `now`; returns how many. */
  readonly deleteExpired: (now: Timestamp) => Effect.Effect<number, StorageError>
}>() {}
