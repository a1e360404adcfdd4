import { Context, Effect, Layer, Option } from "effect"
import type { StorageError } from "../kernel/errors.js"
import { type AccountId, Ids } from "../kernel/ids.js"
import { now } from "../kernel/time.js"
import { Transactor } from "../kernel/transaction.js"
import type { DeliveryRecord } from "../webhooks/delivery.js"
import { DeliveriesRepo, WebhooksRepo } from "../webhooks/repo.js"
import { DeliveryWakeup } from "../webhooks/wakeup.js"
import type { EventRecord, EventType } from "./event.js"
import type { EventData } from "./eventData.js"
import { EventsRepo } from "./repo.js"

/**
 * Records events. The event row and one pending delivery per active subscribed webhook are written
 * in one transaction, which joins the caller's: an event exists exactly when its cause committed,
 * and every delivery the delivery engine will make is already in storage.
 */
export class Events extends Context.Tag("@mzk/core/Events")<Events, {
  readonly record: <T extends EventType>(accountId: AccountId, type: T, data: EventData<T>) => Effect.Effect<EventRecord, StorageError>
}>() {
  static readonly layer = Layer.effect(
    this,
    Effect.gen(function*() {
      const tx = yield* Transactor
      const events = yield* EventsRepo
      const webhooks = yield* WebhooksRepo
      const deliveries = yield* DeliveriesRepo
      const ids = yield* Ids
      // Optional so an Events layer built without a delivery engine in mind still works.
      const wakeup = yield* Effect.serviceOption(DeliveryWakeup)

      const record = <T extends EventType>(accountId: AccountId, type: T, data: EventData<T>) =>
        tx.transaction(Effect.gen(function*() {
          const createdAt = yield* now
          const event: EventRecord = {
            id: yield* ids.make("event"),
            account_id: accountId,
            type,
            created_at: createdAt,
            data: data as EventRecord["data"]
          }
          yield* events.insert(event)
          const targets = yield* webhooks.listSubscribed(accountId, type)
          if (targets.length > 0) {
            const rows: Array<DeliveryRecord> = []
            for (const webhook of targets) {
              rows.push({
                id: yield* ids.make("delivery"),
                account_id: accountId,
                event_id: event.id,
                webhook_id: webhook.id,
                status: "pending",
                attempts: 0,
                next_attempt_at: createdAt,
                lease_expires_at: null,
                first_failed_at: null,
                last_attempt_at: null,
                created_at: createdAt,
                updated_at: createdAt
              })
            }
            yield* deliveries.insertMany(rows)
            // Woken only once the deliveries are committed, so its first claim finds them.
            if (Option.isSome(wakeup)) yield* tx.afterCommit(wakeup.value.notify)
          }
          return event
        }))

      return { record }
    })
  )
}
