import { Context, Effect, FiberRef } from "effect"
import type { StorageError } from "./errors.js"

/**
 * Storage's unit of work. Repository calls made inside `transaction` join it (adapters carry the
 * open transaction in a FiberRef), so a state change and the events and deliveries it causes
 * commit or roll back together: the transactional outbox.
 *
 * Limits that must hold under concurrency (active keys, webhooks, rate counters) are part of the
 * repository contracts, not checked by the caller with a read, because only storage can make
 * "count then insert" atomic across processes.
 */
export class Transactor extends Context.Tag("@mzk/core/Transactor")<Transactor, {
  /** Runs `effect` in one transaction; joins the current one when already inside. */
  readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | StorageError, R>
  /**
   * Runs `effect` once the outermost transaction around the caller has committed: at once outside
   * a transaction, never if it rolls back. For in-process nudges (wake a loop), which must not run
   * before the work they announce is visible to the loop's own queries.
   */
  readonly afterCommit: (effect: Effect.Effect<void>) => Effect.Effect<void>
}>() {}

/**
 * After-commit bookkeeping for a store that has no transaction state of its own to keep it in (the
 * memory store): `afterCommit` for the port, and `collect` to wrap the outermost transaction (the
 * whole of it, commit included), which runs the hooks registered inside it once it has succeeded.
 * The SQL adapter keeps the hooks with its open transaction instead.
 */
export const makeCommitHooks = () => {
  const pending = FiberRef.unsafeMake<Array<Effect.Effect<void>> | undefined>(undefined)
  const afterCommit = (effect: Effect.Effect<void>): Effect.Effect<void> =>
    Effect.flatMap(FiberRef.get(pending), (hooks) => (hooks === undefined ? effect : Effect.sync(() => void hooks.push(effect))))
  const collect = <A, E, R>(transaction: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.suspend(() => {
      const hooks: Array<Effect.Effect<void>> = []
      return Effect.locally(transaction, pending, hooks).pipe(Effect.tap(() => Effect.forEach(hooks, (hook) => hook, { discard: true })))
    })
  return { afterCommit, collect }
}
