import { Schema } from "effect"
import { AccountId, EventId } from "../kernel/ids.js"
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
  "circuit.failed"
] as const
export const EventType = Schema.Literal(...EVENT_TYPES).annotations({ identifier: "EventType" })
export type EventType = typeof EventType.Type

/** The delivered payload (spec 2.3). `id` stays the same on every attempt. */
export const EventEnvelope = Schema.Struct({
  id: EventId,
  type: EventType,
  created_at: Timestamp,
  data: Schema.Record({ key: Schema.String, value: Schema.Unknown })
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
