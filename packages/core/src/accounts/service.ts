import { Context, Effect, Layer, type Option } from "effect"
import type { StorageError } from "../kernel/errors.js"
import { type AccountId, Ids } from "../kernel/ids.js"
import { now } from "../kernel/time.js"
import type { Account, CreateAccountInput } from "./account.js"
import { AccountsRepo } from "./repo.js"

/** Accounts own every resource. The standalone server creates them from the CLI. */
export class Accounts extends Context.Tag("@mzk/core/Accounts")<Accounts, {
  readonly create: (input: CreateAccountInput) => Effect.Effect<Account, StorageError>
  readonly get: (id: AccountId) => Effect.Effect<Option.Option<Account>, StorageError>
}>() {
  static readonly layer = Layer.effect(
    this,
    Effect.gen(function*() {
      const repo = yield* AccountsRepo
      const ids = yield* Ids
      return {
        create: ({ name }) =>
          Effect.gen(function*() {
            const account: Account = { id: yield* ids.make("account"), name, created_at: yield* now }
            yield* repo.insert(account)
            return account
          }),
        get: repo.get
      }
    })
  )
}
