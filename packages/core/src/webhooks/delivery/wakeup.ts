import { Context, Layer } from "effect"
import { makeWakeup, type Wakeup } from "../../kernel/wakeup.js"

/** New deliveries were recorded: the delivery engine starts at once instead of at its next poll. */
export class DeliveryWakeup extends Context.Tag("@mzk/core/DeliveryWakeup")<DeliveryWakeup, Wakeup>() {
  static readonly layer = Layer.effect(this, makeWakeup)
}
