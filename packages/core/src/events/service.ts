import { Context, Effect, Layer, Option, Schema } from "effect"
import { EventNotFound, type StorageError } from "../kernel/errors.js"
import { type AccountId, EventId, Ids } from "../kernel/ids.js"
import { pageOf } from "../kernel/paging.js"
import { now } from "../kernel/time.js"
import { Transactor } from "../kernel/transaction.js"
import type { DeliveryRecord, DeliveryTrigger } from "../webhooks/delivery.js"
import { DeliveriesRepo, WebhooksRepo } from "../webhooks/repo.js"
import { DeliveryWakeup } from "../webhooks/wakeup.js"
import type { WebhookRecord } from "../webhooks/webhook.js"
import { type EventEnvelope, type EventRecord, type EventType, type ListEventsQuery, toEnvelope } from "./event.js"
import type { EventData } from "./eventData.js"
import { EventsRepo } from "./repo.js"

export interface EventList {
  readonly events: ReadonlyArray<EventEnvelope>
  readonly total: number
  readonly has_more: boolean
}

const isEventId = Schema.is(EventId)

/**
 * Records events, and reads them back for `GET /events`. The event row and one pending delivery
 * per active subscribed webhook are written in one transaction, which joins the caller's: an event
 * exists exactly when its cause committed, and every delivery the delivery engine will make is
 * already in storage.
 */
export class Events extends Context.Tag("@mzk/core/Events")<Events, {
  readonly record: <T extends EventType>(accountId: AccountId, type: T, data: EventData<T>) => Effect.Effect<EventRecord, StorageError>
  /**
   * Records an event for one webhook only, whatever it subscribes to, with one `manual` delivery
   * to it (one attempt, no retry schedule): what `POST /webhooks/{id}/test` sends.
   */
  readonly recordFor: <T extends EventType>(
    webhook: WebhookRecord,
    type: T,
    data: EventData<T>
  ) => Effect.Effect<{ readonly event: EventRecord; readonly delivery: DeliveryRecord }, StorageError>
  /** The account's events, newest first (Stripe's order for a log). */
  readonly list: (accountId: AccountId, query?: ListEventsQuery) => Effect.Effect<EventList, StorageError>
  /** Unknown, malformed, expired and other accounts' ids are all `EventNotFound`. */
  readonly get: (accountId: AccountId, id: string) => Effect.Effect<EventEnvelope, EventNotFound | StorageError>
}>() {
  static readonly layer = Layer.effect(
    this,
    Effect.gen(function*() {
      const tx = yield* Transactor
      const events = yield* EventsRepo
      const webhooks = yield* WebhooksRepo
      const deliveries = yield* DeliveriesRepo
      const ids = yield* Ids
      // Optional so an Events layer built without a delivery engine in mind still works.
      const wakeup = yield* Effect.serviceOption(DeliveryWakeup)

      const insertEvent = <T extends EventType>(accountId: AccountId, type: T, data: EventData<T>) =>
        Effect.gen(function*() {
          const createdAt = yield* now
          const event: EventRecord = {
            id: yield* ids.make("event"),
            account_id: accountId,
            type,
            created_at: createdAt,
            data: data as EventRecord["data"]
          }
          yield* events.insert(event)
          return event
        })

      const deliveryOf = (event: EventRecord, webhook: WebhookRecord, trigger: DeliveryTrigger) =>
        Effect.map(ids.make("delivery"), (id): DeliveryRecord => ({
          id,
          account_id: event.account_id,
          event_id: event.id,
          webhook_id: webhook.id,
          status: "pending",
          trigger,
          attempts: 0,
          next_attempt_at: event.created_at,
          lease_expires_at: null,
          first_failed_at: null,
          last_attempt_at: null,
          created_at: event.created_at,
          updated_at: event.created_at
        }))

      /** Writes the deliveries and wakes the engine once they are committed, so its first claim finds them. */
      const queue = (rows: ReadonlyArray<DeliveryRecord>) =>
        Effect.gen(function*() {
          yield* deliveries.insertMany(rows)
          if (Option.isSome(wakeup)) yield* tx.afterCommit(wakeup.value.notify)
        })

      const record = <T extends EventType>(accountId: AccountId, type: T, data: EventData<T>) =>
        tx.transaction(Effect.gen(function*() {
          const event = yield* insertEvent(accountId, type, data)
          const targets = yield* webhooks.listSubscribed(accountId, type)
          if (targets.length > 0) yield* queue(yield* Effect.forEach(targets, (webhook) => deliveryOf(event, webhook, "scheduled")))
          return event
        }))

      const recordFor = <T extends EventType>(webhook: WebhookRecord, type: T, data: EventData<T>) =>
        tx.transaction(Effect.gen(function*() {
          const event = yield* insertEvent(webhook.account_id, type, data)
          const delivery = yield* deliveryOf(event, webhook, "manual")
          yield* queue([delivery])
          return { event, delivery }
        }))

      const list = (accountId: AccountId, query: ListEventsQuery = {}) =>
        Effect.map(
          events.list(accountId, { ...pageOf(query), order: "desc" }, {
            types: query.type === undefined ? undefined : typeof query.type === "string" ? [query.type] : query.type,
            createdGte: query.created_gte,
            createdLt: query.created_lt
          }),
          (found) => ({ events: found.items.map(toEnvelope), total: found.total, has_more: found.has_more })
        )

      const notFound = (id: string) => new EventNotFound({ message: `No event ${JSON.stringify(id)} in this account` })
      const get = (accountId: AccountId, id: string) =>
        isEventId(id)
          ? Effect.flatMap(events.get(id), (found) =>
            Option.isSome(found) && found.value.account_id === accountId ? Effect.succeed(toEnvelope(found.value)) : Effect.fail(notFound(id)))
          : Effect.fail(notFound(id))

      return { record, recordFor, list, get }
    })
  )
}
