import { Context, Effect, Layer } from "effect"
import type { StorageError } from "../kernel/errors.js"
import type { Timestamp } from "../kernel/time.js"
import type { EventRecord } from "./event.js"

/**
 * What another part of the core does when the outbox records an event, and what it keeps only as
 * long as the events it came from. The outbox knows subscribers by this shape alone, so a feature
 * that reacts to events (webhooks fan them out to deliveries) depends on `events/`, never the
 * other way round.
 */
export interface EventSubscriber {
  /**
   * Runs inside the transaction that inserts `event`, after the insert: what it writes commits
   * with the event or not at all, so whatever it derives from the event exists exactly when the
   * event does.
   */
  readonly recorded: (event: EventRecord) => Effect.Effect<void, StorageError>
  /**
   * Run by the event retention sweep after it deleted the events created before `before`: deletes,
   * `batchSize` rows per statement, what the subscriber kept for those events' sake.
   */
  readonly expire?: (before: Timestamp, batchSize: number) => Effect.Effect<void, StorageError>
}

/**
 * The outbox's subscribers, in the order they run. Built once, where the core is composed
 * (`CoreServices`), so which parts react to events is read in one place and fixed for the life of
 * the layer, with no registration at run time.
 */
export class EventSubscribers extends Context.Tag("@mzk/core/EventSubscribers")<EventSubscribers, ReadonlyArray<EventSubscriber>>() {
  /** The subscribers made by `subscribers`, each built once with the layer. */
  static readonly layer = <E, R>(...subscribers: ReadonlyArray<Effect.Effect<EventSubscriber, E, R>>) =>
    Layer.effect(this, Effect.all(subscribers))
}
