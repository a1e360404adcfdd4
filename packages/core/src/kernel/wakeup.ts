import { Effect, Queue } from "effect"

/**
 * An in-process nudge for an idle loop: a sliding queue of one, so any number of nudges before the
 * loop looks collapse into one, and a nudge that arrives while it works is kept for its next wait.
 * Other processes still find work by polling (or by Postgres LISTEN/NOTIFY, which ends in `notify`).
 */
export interface Wakeup {
  readonly notify: Effect.Effect<void>
  /** Waits for a nudge and consumes it. */
  readonly take: Effect.Effect<void>
  /** Consumes a pending nudge, if any, without waiting. */
  readonly clear: Effect.Effect<void>
}

export const makeWakeup: Effect.Effect<Wakeup> = Effect.map(Queue.sliding<void>(1), (queue) => ({
  notify: Effect.asVoid(Queue.offer(queue, undefined)),
  take: Queue.take(queue),
  clear: Effect.asVoid(Queue.takeAll(queue))
}))
