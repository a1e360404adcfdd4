import { Context, Effect, Layer, Queue } from "effect"

/**
 * The in-process nudge that new deliveries were recorded, so the delivery engine starts at once
 * instead of at its next poll. A sliding queue of one: any number of nudges before the engine looks
 * collapse into one, and a nudge that arrives while it works is kept for its next wait.
 */
export class DeliveryWakeup extends Context.Tag("@mzk/core/DeliveryWakeup")<DeliveryWakeup, {
  readonly notify: Effect.Effect<void>
  /** Waits for a nudge and consumes it. */
  readonly take: Effect.Effect<void>
  /** Consumes a pending nudge, if any, without waiting. */
  readonly clear: Effect.Effect<void>
}>() {
  static readonly layer = Layer.effect(
    this,
    Effect.map(Queue.sliding<void>(1), (queue) => ({
      notify: Effect.asVoid(Queue.offer(queue, undefined)),
      take: Queue.take(queue),
      clear: Effect.asVoid(Queue.takeAll(queue))
    }))
  )
}
