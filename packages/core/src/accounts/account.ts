import { Schema } from "effect"
import { AccountId } from "../kernel/ids.js"
import { StoredText } from "../kernel/text.js"
import { Timestamp } from "../kernel/time.js"

export const AccountName = Schema.Trim.pipe(Schema.compose(StoredText), Schema.minLength(1), Schema.maxLength(200))

export const Account = Schema.Struct({
  id: AccountId,
  name: AccountName,
  created_at: Timestamp
}).annotations({ identifier: "Account" })
export type Account = typeof Account.Type

/** What creating an account takes (the CLI's `--name`). */
export const CreateAccountInput = Schema.Struct({ name: AccountName }).annotations({ identifier: "CreateAccountInput" })
export type CreateAccountInput = typeof CreateAccountInput.Type
