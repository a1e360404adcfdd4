import { Context, type Effect, type Option } from "effect"
import type { StorageError } from "../kernel/errors.js"
import type { AccountId } from "../kernel/ids.js"
import type { Account } from "./account.js"

export class AccountsRepo extends Context.Tag("@mzk/core/AccountsRepo")<AccountsRepo, {
  readonly insert: (account: Account) => Effect.Effect<void, StorageError>
  readonly get: (id: AccountId) => Effect.Effect<Option.Option<Account>, StorageError>
}>() {}
