import { Context, type Effect, type Option } from "effect"
import type { StorageError } from "../kernel/errors.js"
import type { AccountId, EventId } from "../kernel/ids.js"
import type { Page, PageOf } from "../kernel/paging.js"
import type { Timestamp } from "../kernel/time.js"
import type { EventFilter, EventRecord } from "./event.js"

export class EventsRepo extends Context.Tag("@mzk/core/EventsRepo")<EventsRepo, {
  readonly insert: (event: EventRecord) => Effect.Effect<void, StorageError>
  readonly get: (id: EventId) => Effect.Effect<Option.Option<EventRecord>, StorageError>
  /**
   * The account's events in id order (`page.order`), only those of `filter.types` when given,
   * created at or after `filter.createdGte` and before `filter.createdLt`; `total` counts every
   * event the filter matches.
   */
  readonly list: (accountId: AccountId, page: Page, filter?: EventFilter) => Effect.Effect<PageOf<EventRecord>, StorageError>
  /**
   * Retention: deletes up to `limit` of the oldest events created before `before` that have no
   * `pending` delivery, with their deliveries and those deliveries' attempts; returns how many
   * events it deleted. An event with a pending delivery (a retry in its schedule, a manual retry)
   * is left for a later sweep, also when the delivery became pending while this ran: a delivery
   * is deleted only while settled, and an event only once no delivery of it is left.
   */
  readonly deleteExpired: (before: Timestamp, limit: number) => Effect.Effect<number, StorageError>
}>() {}
