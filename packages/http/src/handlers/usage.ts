import { actingFor, UsageReports } from "@mzk/core"
import { Effect } from "effect"
import { implement } from "./handler.js"

export const UsageHandlers = Effect.map(UsageReports, (usage) =>
  implement("usage", {
    // Run as the caller, so the minute reported is its key's (a GET has no request context of its own).
    get: ({ principal }) => actingFor(principal)(usage.get(principal.account_id))
  }))
