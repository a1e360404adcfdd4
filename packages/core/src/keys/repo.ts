import { Context, type Effect, type Option } from "effect"
import type { KeyLimitReached, StorageError } from "../kernel/errors.js"
import type { AccountId, KeyId } from "../kernel/ids.js"
import type { Timestamp } from "../kernel/time.js"
import type { ApiKeyRecord } from "./apiKey.js"

/** What `KeysRepo.roll` did. */
export type KeyRollOutcome =
  | { readonly _tag: "rolled"; readonly key: ApiKeyRecord; readonly previousExpiresAt: Timestamp | null }
  | { readonly _tag: "already_rolled"; readonly key: ApiKeyRecord }
  | { readonly _tag: "not_found" }

export class KeysRepo extends Context.Tag("@mzk/core/KeysRepo")<KeysRepo, {
  /**
   * Inserts a key unless the account already has `maxActive` keys active at `now` (not revoked,
   * not expired: a key rolled over still counts until its overlap ends); atomic.
   */
  readonly insert: (
    key: ApiKeyRecord,
    limits: { readonly maxActive: number; readonly now: Timestamp }
  ) => Effect.Effect<void, KeyLimitReached | StorageError>
  /** The key with this SHA-256, whatever its state. */
  readonly findByHash: (hash: string) => Effect.Effect<Option.Option<ApiKeyRecord>, StorageError>
  /** Keys of the account active at `now`, in id order. */
  readonly listActive: (accountId: AccountId, now: Timestamp) => Effect.Effect<ReadonlyArray<ApiKeyRecord>, StorageError>
  /** Revokes a key of the account active at `at`; none when it is unknown, another account's, revoked or expired. */
  readonly revoke: (accountId: AccountId, id: KeyId, at: Timestamp) => Effect.Effect<Option.Option<ApiKeyRecord>, StorageError>
  /**
   * Marks a key of the account that is active at `now` as replaced by `replacedBy` and makes it
   * stop working at `until` (or keeps its earlier expiry), as one conditional write: a key is
   * rolled once, so of concurrent rolls one wins. `rolled` gives the key as updated and the expiry
   * it had; `already_rolled` the key as an earlier roll left it; `not_found` when it is unknown,
   * another account's, revoked or expired.
   */
  readonly roll: (
    accountId: AccountId,
    id: KeyId,
    change: { readonly until: Timestamp; readonly replacedBy: KeyId; readonly now: Timestamp }
  ) => Effect.Effect<KeyRollOutcome, StorageError>
  /**
   * Sets `last_used_at = at` only when it is null or earlier than `staleBefore`, as one atomic
   * write, so concurrent requests write it at most once per interval. True when it wrote.
   */
  readonly touch: (id: KeyId, at: Timestamp, staleBefore: Timestamp) => Effect.Effect<boolean, StorageError>
}>() {}
