import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { EventEnvelope, ListEventsQuery } from "@mzk/core"
import { Schema } from "effect"
import { Authentication, requires } from "./annotations.js"
import { EventNotFoundWire } from "./errors.js"

export const EventList = Schema.Struct({ events: Schema.Array(EventEnvelope), total: Schema.Int, has_more: Schema.Boolean })
  .annotations({ identifier: "EventList" })

const eventId = HttpApiSchema.param("id", Schema.String)

export class EventsGroup extends HttpApiGroup.make("events")
  .add(
    HttpApiEndpoint.get("list", "/events")
      .setUrlParams(ListEventsQuery)
      .addSuccess(EventList)
      .pipe(requires("events:read"))
      .annotate(
        OpenApi.Description,
        "The account's events, newest first, as webhooks receive them (each type's `data` is in the `webhooks` section), " +
          "whether or not a webhook was subscribed: `type` (repeat it for several), `created_gte`, `created_lt`, and " +
          "`starting_after` an event id to page on to older ones (`ending_before` back to newer ones). Events are kept for the retention window (30 days by default)."
      )
  )
  .add(
    HttpApiEndpoint.get("get")`/events/${eventId}`
      .addSuccess(EventEnvelope)
      .addError(EventNotFoundWire)
      .pipe(requires("events:read"))
      .annotate(OpenApi.Description, "One event, the same body its webhooks received.")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Events")
{}
