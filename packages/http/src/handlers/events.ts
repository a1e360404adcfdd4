import { Events } from "@mzk/core"
import { Effect } from "effect"
import { implement } from "./handler.js"

export const EventsHandlers = Effect.map(Events, (events) =>
  implement("events", {
    list: ({ principal, urlParams }) => events.list(principal.account_id, urlParams),
    get: ({ path, principal }) => events.get(principal.account_id, path.id)
  }))
