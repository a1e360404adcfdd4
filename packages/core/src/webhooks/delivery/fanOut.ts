import { Effect } from "effect"
import { type EventRecord, SUBSCRIBABLE_EVENT_TYPES } from "../../events/event.js"
import { WebhooksRepo } from "../endpoints/repo.js"
import { makeDeliveryQueue } from "./queue.js"

const subscribable: ReadonlySet<string> = new Set(SUBSCRIBABLE_EVENT_TYPES)

/**
 * An event's fan-out: one `scheduled` delivery to each active webhook of its account subscribed to
 * its type, written in the transaction that records the event. Types no webhook can subscribe to
 * (`webhook.test`) fan out to nobody: their one delivery is queued by whoever recorded them.
 */
export const makeDeliveryFanOut = Effect.gen(function*() {
  const webhooks = yield* WebhooksRepo
  const { queue } = yield* makeDeliveryQueue

  return (event: EventRecord) =>
    subscribable.has(event.type)
      ? Effect.flatMap(webhooks.listSubscribed(event.account_id, event.type), (targets) => queue(event, targets, "scheduled"))
      : Effect.void
})
