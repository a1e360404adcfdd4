import type { Schema } from "effect"
import { CircuitFailedData, CircuitReadyData } from "../circuits/circuit.js"
import { KeyCreatedData, KeyRevokedData, KeyRolledData } from "../keys/apiKey.js"
import type { EventType } from "./event.js"
import { ProofCanceledData, ProofCompletedData, ProofExpiredData, ProofFailedData, ProofVerifiedData } from "../proofs/proof.js"
import { WebhookTestData } from "../webhooks/webhook.js"

/** The `data` schema of every event type, so an event can only be recorded with its own body. */
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

export type EventData<T extends EventType> = Schema.Schema.Type<(typeof EVENT_DATA)[T]>
