import type { Schema } from "effect"
import { CircuitFailedData, CircuitReadyData } from "./circuits/circuit.js"
import { KeyCreatedData, KeyRevokedData, KeyRolledData } from "./keys/apiKey.js"
import type { EventType } from "./events/event.js"
import { ProofCanceledData, ProofCompletedData, ProofExpiredData, ProofFailedData, ProofVerifiedData } from "./proofs/proof.js"
import { WebhookTestData } from "./webhooks/endpoints/webhook.js"

/**
 * The payload registry: the `data` schema of every event type, so an event can only be recorded
 * with its own body, and the OpenAPI document describes each. It sits beside the composition root
 * because it names every feature's payload; `events/` below it names none.
 */
export const EVENT_DATA = {
  "proof.completed": ProofCompletedData,
  "proof.failed": ProofFailedData,
  "proof.expired": ProofExpiredData,
  "proof.verified": ProofVerifiedData,
  "proof.canceled": ProofCanceledData,
  "key.created": KeyCreatedData,
  "key.revoked": KeyRevokedData,
  "key.rolled": KeyRolledData,
  "circuit.ready": CircuitReadyData,
  "circuit.failed": CircuitFailedData,
  "webhook.test": WebhookTestData
} as const satisfies Record<EventType, Schema.Schema.AnyNoContext>

type RegisteredPayloads = { readonly [T in EventType]: Schema.Schema.Type<(typeof EVENT_DATA)[T]> }

// Declaration merging hands the registry's types to `events/` (`EventData<T>`, what
// `Events.record` takes) without an import from it back up to here.
declare module "./events/event.js" {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled in by declaration merging
  interface EventPayloads extends RegisteredPayloads {}
}
