import { Effect } from "effect"
import { AuditHandlers } from "./audit.js"
import { CircuitsHandlers } from "./circuits.js"
import { EventsHandlers } from "./events.js"
import { KeysHandlers } from "./keys.js"
import { ProofsHandlers } from "./proofs.js"
import { UsageHandlers } from "./usage.js"
import { VerificationKeysHandlers, VerificationsHandlers } from "./verifications.js"
import { WebhooksHandlers } from "./webhooks.js"

/** Every group of MzkApi implemented over the core services. */
export const MzkHandlers = Effect.all([KeysHandlers, WebhooksHandlers, ProofsHandlers, CircuitsHandlers, EventsHandlers, AuditHandlers,
  UsageHandlers, VerificationsHandlers, VerificationKeysHandlers])
