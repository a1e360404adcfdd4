import { Context, Effect, Layer, type Option, Schema } from "effect"
import { type Account, AccountName } from "../domain/account.js"
import type { InvalidRequest, StorageError } from "../errors.js"
import { type AccountId, idMaker } from "../ids.js"
import { Entropy } from "../ports/entropy.js"
import { AccountsRepo } from "../ports/storage.js"
import { now } from "../time.js"
import { decodeInput } from "../validation.js"

const decodeCreate = decodeInput(Schema.Struct({ name: AccountName }))

/** Accounts own every resource. The standalone server creates them from the CLI. */
export class Accounts extends Context.Tag("@mzk/core/Accounts")<Accounts, {
  readonly create: (input: unknown) => Effect.Effect<Account, InvalidRequest | StorageError>
  readonly get: (id: AccountId) => Effect.Effect<Option.Option<Account>, StorageError>
}>() {
  static readonly layer = Layer.effect(
    this,
    Effect.gen(function*() {
      const repo = yield* AccountsRepo
      const newId = idMaker(yield* Entropy)
      return {
        create: (input) =>
          Effect.gen(function*() {
            const { name } = yield* decodeCreate(input)
            const account: Account = { id: yield* newId("account"), name, created_at: yield* now }
            yield* repo.insert(account)
            return account
          }),
        get: repo.get
      }
    })
  )
}
