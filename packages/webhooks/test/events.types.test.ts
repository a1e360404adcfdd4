import { EVENT_TYPES as CORE_EVENT_TYPES, type EventData, type EventEnvelope } from "@mzk/core"
import {
  EVENT_TYPES,
  type EventDataByType,
  type EventType,
  type MzkEvent,
  type MzkEventOf
} from "@mzk/webhooks"
import { describe, expect, expectTypeOf, it } from "vitest"
import type { Plain } from "./plain.js"

/**
 * The types are generated from the OpenAPI document (`pnpm gen`; `packages/http/test/api/contract.test.ts`
 * fails while they are stale). What generation cannot vouch for itself is its translation of
 * JSON Schema into TypeScript: the compiler holds the result equal to the core's own types here.
 */
describe("the generated event types are the server's", () => {
  it("the same event types as the core, in the same order", () => {
    expect(EVENT_TYPES).toEqual(CORE_EVENT_TYPES)
  })

  it("the data types equal the core's, field for field (checked by the compiler)", () => {
    expectTypeOf<EventDataByType["proof.completed"]>().toEqualTypeOf<Plain<EventData<"proof.completed">>>()
    expectTypeOf<EventDataByType["proof.failed"]>().toEqualTypeOf<Plain<EventData<"proof.failed">>>()
    expectTypeOf<EventDataByType["proof.expired"]>().toEqualTypeOf<Plain<EventData<"proof.expired">>>()
    expectTypeOf<EventDataByType["proof.verified"]>().toEqualTypeOf<Plain<EventData<"proof.verified">>>()
    expectTypeOf<EventDataByType["proof.canceled"]>().toEqualTypeOf<Plain<EventData<"proof.canceled">>>()
    expectTypeOf<EventDataByType["key.created"]>().toEqualTypeOf<Plain<EventData<"key.created">>>()
    expectTypeOf<EventDataByType["key.revoked"]>().toEqualTypeOf<Plain<EventData<"key.revoked">>>()
    expectTypeOf<EventDataByType["key.rolled"]>().toEqualTypeOf<Plain<EventData<"key.rolled">>>()
    expectTypeOf<EventDataByType["circuit.ready"]>().toEqualTypeOf<Plain<EventData<"circuit.ready">>>()
    expectTypeOf<EventDataByType["circuit.failed"]>().toEqualTypeOf<Plain<EventData<"circuit.failed">>>()
    expectTypeOf<EventDataByType["webhook.test"]>().toEqualTypeOf<Plain<EventData<"webhook.test">>>()
    expectTypeOf<EventType>().toEqualTypeOf<Plain<EventEnvelope["type"]>>()
    expectTypeOf<MzkEvent["type"]>().toEqualTypeOf<EventType>()
    expectTypeOf<Extract<MzkEvent, { type: "circuit.failed" }>>().toEqualTypeOf<MzkEventOf<"circuit.failed">>()
  })
})
