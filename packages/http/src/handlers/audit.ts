import { AuditLog } from "@mzk/core"
import { Effect } from "effect"
import { implement } from "./handler.js"

export const AuditHandlers = Effect.map(AuditLog, (audit) =>
  implement("audit", {
    list: ({ principal, urlParams }) => audit.list(principal.account_id, urlParams)
  }))
