import { Context, Effect, Layer, Option, Schema } from "effect"
import { EventNotFound, type InvalidRequest, type StorageError } from "../kernel/errors.js"
import { type AccountId, EventId, Ids } from "../kernel/ids.js"
import { pageOf } from "../kernel/paging.js"
import { now } from "../kernel/time.js"
import { Transactor } from "../kernel/transaction.js"
import { type EventData, type EventEnvelope, type EventRecord, type EventType, type ListEventsQuery, toEnvelope } from "./event.js"
import { EventsRepo } from "./repo.js"
import { EventSubscribers } from "./subscribers.js"

export interface EventList {
  readonly events: ReadonlyArray<EventEnvelope>
  readonly total: number
  readonly has_more: boolean
}

const isEventId = Schema.is(EventId)

/**
 * The outbox: records events, and reads them back for `GET /events`. The event row is written in
 * a transaction that joins the caller's, and every `EventSubscriber` runs in it (webhooks write
 * their deliveries there): an event exists exactly when its cause committed, and whatever a
 * subscriber derives from it commits with it.
 */
export class Events extends Context.Tag("@mzk/core/Events")<Events, {
  readonly record: <T extends EventType>(accountId: AccountId, type: T, data: EventData<T>) => Effect.Effect<EventRecord, StorageError>
  /** The account's events, newest first (Stripe's order for a log). */
  readonly list: (accountId: AccountId, query?: ListEventsQuery) => Effect.Effect<EventList, InvalidRequest | StorageError>
  /** Unknown, malformed, expired and other accounts' ids are all `EventNotFound`. */
  readonly get: (accountId: AccountId, id: string) => Effect.Effect<EventEnvelope, EventNotFound | StorageError>
}>() {
  static readonly layer = Layer.effect(
    this,
    Effect.gen(function*() {
      const tx = yield* Transactor
      const events = yield* EventsRepo
      const ids = yield* Ids
      const subscribers = yield* EventSubscribers

      const record = <T extends EventType>(accountId: AccountId, type: T, data: EventData<T>) =>
        tx.transaction(Effect.gen(function*() {
          const createdAt = yield* now
          const event: EventRecord = {
            id: yield* ids.make("event"),
            account_id: accountId,
            type,
            created_at: createdAt,
            data: data as EventRecord["data"]
          }
          yield* events.insert(event)
          for (const subscriber of subscribers) yield* subscriber.recorded(event)
          return event
        }))

      const list = (accountId: AccountId, query: ListEventsQuery = {}) =>
        Effect.map(
          Effect.flatMap(pageOf(query), (page) =>
            events.list(accountId, page, {
              types: query.type === undefined ? undefined : typeof query.type === "string" ? [query.type] : query.type,
              createdGte: query.created_gte,
              createdLt: query.created_lt
            })),
          (found) => ({ events: found.items.map(toEnvelope), total: found.total, has_more: found.has_more })
        )

      const notFound = (id: string) => new EventNotFound({ message: `No event ${JSON.stringify(id)} in this account` })
      const get = (accountId: AccountId, id: string) =>
        isEventId(id)
          ? Effect.flatMap(events.get(id), (found) =>
            Option.isSome(found) && found.value.account_id === accountId ? Effect.succeed(toEnvelope(found.value)) : Effect.fail(notFound(id)))
          : Effect.fail(notFound(id))

      return { record, list, get }
    })
  )
}
