import { Schema } from "effect"
import { quote } from "../kernel/decode.js"
import { AccountId, EventId } from "../kernel/ids.js"
import { pageQuery } from "../kernel/paging.js"
import { Timestamp } from "../kernel/time.js"

export const EVENT_TYPES = [
  "proof.completed",
  "proof.failed",
  "proof.expired",
  "proof.verified",
  "proof.canceled",
  "key.created",
  "key.revoked",
  "key.rolled",
  "circuit.ready",
  "circuit.failed",
  "webhook.test"
] as const
export const EventType = Schema.Literal(...EVENT_TYPES).annotations({ identifier: "EventType" })
export type EventType = typeof EventType.Type

/**
 * Event types sent only to the webhook they concern, never fanned out to subscribers:
 * `webhook.test` goes to the webhook `POST /webhooks/{id}/test` tests, so a test of one endpoint
 * never reaches another.
 */
export const UNSUBSCRIBABLE_EVENT_TYPES = ["webhook.test"] as const satisfies ReadonlyArray<EventType>
type Unsubscribable = (typeof UNSUBSCRIBABLE_EVENT_TYPES)[number]
const isSubscribable = (type: EventType): type is Exclude<EventType, Unsubscribable> =>
  !(UNSUBSCRIBABLE_EVENT_TYPES as ReadonlyArray<EventType>).includes(type)
export const SUBSCRIBABLE_EVENT_TYPES = EVENT_TYPES.filter(isSubscribable)

/** What a webhook's `events` may name: every event type but those sent only to one webhook. */
export const SubscribableEventType = Schema.Literal(...SUBSCRIBABLE_EVENT_TYPES).annotations({
  identifier: "SubscribableEventType",
  // One message for the value, rather than one "Expected …" per member of the union.
  message: (issue) => {
    const actual = quote(issue.actual)
    return {
      override: true,
      message: (UNSUBSCRIBABLE_EVENT_TYPES as ReadonlyArray<unknown>).includes(issue.actual)
        ? `${actual} cannot be subscribed to: POST /api/v1/webhooks/{id}/test sends it to the webhook it tests`
        : `${actual} is not an event type a webhook can subscribe to (${SUBSCRIBABLE_EVENT_TYPES.join(", ")})`
    }
  }
})
export type SubscribableEventType = typeof SubscribableEventType.Type

/**
 * Each event type's `data`, by type. Empty here on purpose: the payload registry beside the
 * composition root (`src/eventData.ts`) fills it in by declaration merging, so `events/` names no
 * feature's payload while `Events.record` still takes only the body of the type it records.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled in by declaration merging
export interface EventPayloads {}

/** The `data` of an event of type `T`, as the payload registry gives it. */
export type EventData<T extends EventType> = T extends keyof EventPayloads ? EventPayloads[T] : never

/** The delivered payload (spec 2.3). `id` stays the same on every attempt. */
export const EventEnvelope = Schema.Struct({
  id: EventId,
  type: EventType,
  created_at: Timestamp,
  // Described as a plain object: each type's own body is in the OpenAPI document's `webhooks` section.
  data: Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
    jsonSchema: { type: "object", description: "The event's body; its fields depend on `type`" }
  })
}).annotations({ identifier: "Event" })
export type EventEnvelope = typeof EventEnvelope.Type

export interface EventRecord extends EventEnvelope {
  readonly account_id: AccountId
}

export const toEnvelope = (record: EventRecord): EventEnvelope => ({
  id: record.id,
  type: record.type,
  created_at: record.created_at,
  data: record.data
})

/**
 * `GET /events`: newest first, paged by an event id; `type` once or repeated for several types,
 * `created_gte`/`created_lt` bound the creation time.
 */
export const ListEventsQuery = Schema.Struct({
  ...pageQuery(EventId).fields,
  type: Schema.optionalWith(
    Schema.Union(EventType, Schema.NonEmptyArray(EventType)).annotations({
      description: "Only events of this type; repeat the parameter for several (`?type=proof.completed&type=proof.failed`)"
    }),
    { exact: true }
  ),
  created_gte: Schema.optionalWith(Timestamp.annotations({ description: "Only events created at or after this time" }), { exact: true }),
  created_lt: Schema.optionalWith(Timestamp.annotations({ description: "Only events created before this time" }), { exact: true })
})
export type ListEventsQuery = typeof ListEventsQuery.Type

/** What storage filters an account's events by. */
export interface EventFilter {
  readonly types?: ReadonlyArray<EventType> | undefined
  readonly createdGte?: Timestamp | undefined
  readonly createdLt?: Timestamp | undefined
}
