import { DeliveriesRepo, type DeliveryRecord } from "@mzk/core"
import { Effect } from "effect"
import { byId, type MemoryDb } from "./db.js"

export const memoryDeliveries = (db: MemoryDb) => {
  const deliveries = db.table<DeliveryRecord>("deliveries")
  return DeliveriesRepo.of({
    insertMany: (rows) => db.write(Effect.sync(() => rows.forEach((row) => deliveries.set(row.id, row)))),
    listByEvent: (eventId) => Effect.sync(() => [...deliveries.values()].filter((d) => d.event_id === eventId).sort(byId))
  })
}
