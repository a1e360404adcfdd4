import { Effect, Option } from "effect"
import type { EventRecord } from "../../events/event.js"
import { Ids } from "../../kernel/ids.js"
import { Transactor } from "../../kernel/transaction.js"
import type { WebhookRecord } from "../endpoints/webhook.js"
import type { DeliveryRecord, DeliveryTrigger } from "./delivery.js"
import { DeliveriesRepo } from "./repo.js"
import { DeliveryWakeup } from "./wakeup.js"

/**
 * Queueing an event's deliveries, shared by the fan-out of every recorded event and by
 * `POST /webhooks/{id}/test`: one pending delivery per webhook, due when the event was created,
 * written inside the caller's transaction.
 */
export const makeDeliveryQueue = Effect.gen(function*() {
  const deliveries = yield* DeliveriesRepo
  const ids = yield* Ids
  const tx = yield* Transactor
  // Optional so a core built without a delivery engine in mind still records deliveries.
  const wakeup = yield* Effect.serviceOption(DeliveryWakeup)

  const deliveryOf = (event: EventRecord, webhook: WebhookRecord, trigger: DeliveryTrigger) =>
    Effect.map(ids.make("delivery"), (id): DeliveryRecord => ({
      id,
      account_id: event.account_id,
      event_id: event.id,
      webhook_id: webhook.id,
      status: "pending",
      trigger,
      attempts: 0,
      next_attempt_at: event.created_at,
      lease_expires_at: null,
      first_failed_at: null,
      last_attempt_at: null,
      created_at: event.created_at,
      updated_at: event.created_at
    }))

  /** Writes the deliveries and wakes the engine once they are committed, so its first claim finds them. */
  const write = (rows: ReadonlyArray<DeliveryRecord>) =>
    Effect.gen(function*() {
      yield* deliveries.insertMany(rows)
      if (Option.isSome(wakeup)) yield* tx.afterCommit(wakeup.value.notify)
    })

  /** One delivery of `event` to each of `webhooks`; nothing is written for none. */
  const queue = (event: EventRecord, webhooks: ReadonlyArray<WebhookRecord>, trigger: DeliveryTrigger) =>
    Effect.gen(function*() {
      const rows = yield* Effect.forEach(webhooks, (webhook) => deliveryOf(event, webhook, trigger))
      if (rows.length > 0) yield* write(rows)
      return rows
    })

  /** One delivery of `event` to `webhook`, whatever the webhook subscribes to. */
  const queueOne = (event: EventRecord, webhook: WebhookRecord, trigger: DeliveryTrigger) =>
    Effect.flatMap(deliveryOf(event, webhook, trigger), (row) => Effect.as(write([row]), row))

  return { queue, queueOne }
})
