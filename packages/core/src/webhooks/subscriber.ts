import { Effect } from "effect"
import type { EventSubscriber } from "../events/subscribers.js"
import { makeDeliveryFanOut } from "./delivery/fanOut.js"
import { makeRecoveryExpiry } from "./recovery/expiry.js"

/**
 * Webhooks as a subscriber of the events outbox (`EventSubscribers`, wired in `CoreServices`):
 * every recorded event fans out to its deliveries in the event's own transaction, and the event
 * retention sweep takes the recoveries that ended before its window.
 */
export const webhookEventSubscriber = Effect.map(
  Effect.all([makeDeliveryFanOut, makeRecoveryExpiry]),
  ([fanOut, expire]): EventSubscriber => ({ recorded: (event) => Effect.asVoid(fanOut(event)), expire })
)
