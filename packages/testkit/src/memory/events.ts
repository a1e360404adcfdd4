import { type EventRecord, EventsRepo } from "@mzk/core"
import { Effect, Option } from "effect"
import { type MemoryDb, paginate } from "./db.js"

export const memoryEvents = (db: MemoryDb) => {
  const events = db.table<EventRecord>("events")
  return EventsRepo.of({
    insert: (event) => db.write(Effect.sync(() => void events.set(event.id, event))),
    get: (id) => Effect.sync(() => Option.fromNullable(events.get(id))),
    list: (accountId, page) => Effect.sync(() => paginate([...events.values()].filter((e) => e.account_id === accountId), page))
  })
}
