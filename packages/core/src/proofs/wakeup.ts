import { Context, Effect, Layer, Queue } from "effect"

/**
 * The in-process nudge that proofs were queued or a running proof settled, so the proof worker
 * claims at once instead of at its next poll. A sliding queue of one: nudges collapse, and one that
 * arrives while the worker is busy is kept for its next wait. Other processes still find the work
 * by polling.
 */
export class ProofWakeup extends Context.Tag("@mzk/core/ProofWakeup")<ProofWakeup, {
  readonly notify: Effect.Effect<void>
  /** Waits for a nudge and consumes it. */
  readonly take: Effect.Effect<void>
}>() {
  static readonly layer = Layer.effect(
    this,
    Effect.map(Queue.sliding<void>(1), (queue) => ({
      notify: Effect.asVoid(Queue.offer(queue, undefined)),
      take: Queue.take(queue)
    }))
  )
}
