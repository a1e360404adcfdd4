import { type Account, AccountsRepo } from "@mzk/core"
import { Effect, Option } from "effect"
import type { MemoryDb } from "./db.js"

export const memoryAccounts = (db: MemoryDb) => {
  const accounts = db.table<Account>("accounts")
  return AccountsRepo.of({
    insert: (account) => db.write(Effect.sync(() => void accounts.set(account.id, account))),
    get: (id) => Effect.sync(() => Option.fromNullable(accounts.get(id)))
  })
}
