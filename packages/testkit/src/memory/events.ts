import { type DeliveryAttemptRecord, type DeliveryRecord, type EventRecord, EventsRepo } from "@mzk/core"
import { Effect, Option } from "effect"
import { byId, type MemoryDb, paginate } from "./db.js"

export const memoryEvents = (db: MemoryDb) => {
  const events = db.table<EventRecord>("events")
  // Retention deletes an event with its deliveries and their attempts (see `memoryDeliveries`).
  const deliveries = db.table<DeliveryRecord>("deliveries")
  const attempts = db.table<DeliveryAttemptRecord>("delivery_attempts")
  return EventsRepo.of({
    insert: (event) => db.write(Effect.sync(() => void events.set(event.id, event))),
    get: (id) => Effect.sync(() => Option.fromNullable(events.get(id))),
    list: (accountId, page, filter = {}) =>
      Effect.sync(() =>
        paginate(
          [...events.values()].filter((e) =>
            e.account_id === accountId &&
            (filter.types === undefined || filter.types.includes(e.type)) &&
            (filter.createdGte === undefined || e.created_at >= filter.createdGte) &&
            (filter.createdLt === undefined || e.created_at < filter.createdLt)
          ),
          page
        )
      ),
    deleteExpired: (before, limit) =>
      db.write(Effect.gen(function*() {
        const byEvent = new Map<string, Array<DeliveryRecord>>()
        for (const delivery of deliveries.values()) byEvent.set(delivery.event_id, [...(byEvent.get(delivery.event_id) ?? []), delivery])
        const expired = [...events.values()]
          .filter((e) => e.created_at < before && !(byEvent.get(e.id) ?? []).some((d) => d.status === "pending"))
          .sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : byId(a, b)))
          .slice(0, Math.max(0, limit))
        // Yield between the read and the writes: without the lock, a concurrent retry could slip in.
        yield* Effect.yieldNow()
        const gone = new Set<string>()
        for (const event of expired) {
          for (const delivery of byEvent.get(event.id) ?? []) {
            deliveries.delete(delivery.id)
            gone.add(delivery.id)
          }
          events.delete(event.id)
        }
        for (const attempt of attempts.values()) if (gone.has(attempt.delivery_id)) attempts.delete(attempt.id)
        return expired.length
      }))
  })
}
