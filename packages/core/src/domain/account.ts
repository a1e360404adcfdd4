import { Schema } from "effect"
import { AccountId } from "../ids.js"
import { Timestamp } from "../time.js"
import { StoredText } from "./text.js"

export const AccountName = Schema.Trim.pipe(Schema.compose(StoredText), Schema.minLength(1), Schema.maxLength(200))

export const Account = Schema.Struct({
  id: AccountId,
  name: AccountName,
  created_at: Timestamp
}).annotations({ identifier: "Account" })
export type Account = typeof Account.Type
