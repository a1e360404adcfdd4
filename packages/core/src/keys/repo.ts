import { Context, type Effect, type Option } from "effect"
import type { KeyLimitReached, StorageError } from "../kernel/errors.js"
import type { AccountId, KeyId } from "../kernel/ids.js"
import type { Timestamp } from "../kernel/time.js"
import type { ApiKeyRecord } from "./apiKey.js"

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
