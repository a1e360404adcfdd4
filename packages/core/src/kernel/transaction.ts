import { Context, type Effect } from "effect"
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
