import { Context, type Effect, type Option } from "effect"
import type { StorageError, VerificationKeyLimitReached } from "../kernel/errors.js"
import type { AccountId, VerificationKeyId } from "../kernel/ids.js"
import type { Page, PageOf } from "../kernel/paging.js"
import type { VerificationKeyRecord } from "./verification.js"

/** Registered verification keys: written once, never changed, deleted by their account. */
export class VerificationKeysRepo extends Context.Tag("@mzk/core/VerificationKeysRepo")<VerificationKeysRepo, {
  /** Inserts the key while its account holds fewer than `maxPerAccount`, atomically (concurrent registrations, other processes). */
  readonly insert: (record: VerificationKeyRecord, limits: { readonly maxPerAccount: number }) => Effect.Effect<void, VerificationKeyLimitReached | StorageError>
  readonly get: (accountId: AccountId, id: VerificationKeyId) => Effect.Effect<Option.Option<VerificationKeyRecord>, StorageError>
  /** Newest first, as every list. */
  readonly list: (accountId: AccountId, page: Page) => Effect.Effect<PageOf<VerificationKeyRecord>, StorageError>
  /** The deleted key, none when the account holds no key with this id. */
  readonly remove: (accountId: AccountId, id: VerificationKeyId) => Effect.Effect<Option.Option<VerificationKeyRecord>, StorageError>
}>() {}
