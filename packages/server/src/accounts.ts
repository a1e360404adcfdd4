import { Accounts, ApiKeys, type CreateAccountInput } from "@mzk/core"
import { Effect, Redacted } from "effect"

/**
 * An account and its first API key, as `mzk accounts create` and `createMzk().createAccount` make
 * them: the key's secret in clear, to be shown once.
 */
export const createAccountWithKey = (input: CreateAccountInput) =>
  Effect.gen(function*() {
    const account = yield* (yield* Accounts).create(input)
    const created = yield* (yield* ApiKeys).create(account.id, { name: "default", description: "Created with the account" })
    return { account, api_key: Redacted.value(created.secret) }
  })
