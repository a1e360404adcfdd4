import { HttpApi, OpenApi } from "@effect/platform"
import { AuditGroup } from "./audit.js"
import { CircuitsGroup } from "./circuits.js"
import {
  InternalErrorWire,
  InvalidRequestWire,
  MethodNotAllowedWire,
  NotFoundWire,
  PayloadTooLargeWire,
  ServiceUnavailableWire,
  StorageErrorWire,
  UnsupportedMediaTypeWire
} from "./errors.js"
import { EventsGroup } from "./events.js"
import { KeysGroup } from "./keys.js"
import { describeAnnotations, describeWebhooks } from "./openapi.js"
import { ProofsGroup } from "./proofs.js"
import { UsageGroup } from "./usage.js"
import { VerificationKeysGroup, VerificationsGroup } from "./verifications.js"
import { WebhooksGroup } from "./webhooks.js"

const Definition = HttpApi.make("mzk")
  .add(KeysGroup)
  .add(WebhooksGroup)
  .add(ProofsGroup)
  .add(CircuitsGroup)
  .add(EventsGroup)
  .add(AuditGroup)
  .add(UsageGroup)
  .add(VerificationsGroup)
  .add(VerificationKeysGroup)
  .prefix("/api/v1")
  .addError(InvalidRequestWire)
  .addError(NotFoundWire)
  .addError(MethodNotAllowedWire)
  .addError(PayloadTooLargeWire)
  .addError(UnsupportedMediaTypeWire)
  .addError(StorageErrorWire)
  .addError(ServiceUnavailableWire)
  .addError(InternalErrorWire)
  .annotate(OpenApi.Title, "mzk proof service API")
  .annotate(OpenApi.Version, "1.0.0")
  .annotate(
    OpenApi.Description,
    "Zero-knowledge proofs as a service: API keys, webhooks, proofs, circuits, events and the audit log. Circuits are proven with Groth16, PLONK or FFLONK (circom) or UltraHonk (Noir), " +
      "and proofs made anywhere in any of these systems can be verified. Every error has the body " +
      "{\"error\": {\"code\", \"message\", \"request_id\"}}. A path parameter or query value holding a control character " +
      "(U+0000–U+001F, U+007F–U+009F, percent-encoded as `%00`) is 400 `invalid_request` with `details[].path` naming it, on every " +
      "endpoint. Timestamps are ISO 8601 UTC with milliseconds (`2026-11-22T10:00:00.000Z`) and must name a real date and time. " +
      "The `webhooks` section describes the signed events mzk POSTs to webhooks."
  )

/**
 * The `/api/v1` interface: what is served, documented (OpenAPI) and called (typed client). The
 * errors declared at this level can meet any request: a malformed or invalid one (400), a body
 * refused before it is read (413, 415), a path no route has (404 `not_found`) or a method its path
 * does not take (405), a storage outage or a stopping server (503), a defect (500).
 */
export class MzkApi extends Definition.annotate(
  OpenApi.Transform,
  (spec) => describeWebhooks(describeAnnotations(Definition)(spec as OpenApi.OpenAPISpec))
) {}

export * from "./annotations.js"
export * from "./audit.js"
export * from "./circuits.js"
export * from "./errors.js"
export * from "./events.js"
export * from "./keys.js"
export * from "./proofs.js"
export * from "./upload.js"
export * from "./usage.js"
export * from "./verifications.js"
export * from "./webhooks.js"
