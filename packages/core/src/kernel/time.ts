import { Effect, Schema } from "effect"

const TIMESTAMP_FORM = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

/**
 * A timestamp of the documented form that names a moment that exists: `Date` reads February 30 as
 * March 2 and hour 24 as the next day's midnight, so a real date and time is one that `Date` writes
 * back unchanged (no February 30 or 29 of a common year, month 13, hour 24, minute or second 60).
 */
export const isRealTimestamp = (text: string): boolean => {
  if (!TIMESTAMP_FORM.test(text)) return false
  const millis = Date.parse(text)
  return Number.isFinite(millis) && new Date(millis).toISOString() === text
}

/**
 * ISO 8601 UTC with milliseconds, e.g. `2026-11-22T10:00:00.000Z`; sorts as text in time order.
 * Every timestamp the API takes is this schema, so each refuses a date or time that does not exist
 * (400 naming the field) instead of storing it as sent.
 */
export const Timestamp = Schema.String.pipe(
  Schema.pattern(TIMESTAMP_FORM, { message: () => "must be an ISO 8601 UTC timestamp with milliseconds, e.g. 2026-11-22T10:00:00.000Z" }),
  Schema.filter((text) => isRealTimestamp(text) || "must be a real date and time (no February 30, hour 24 or second 60)", {
    jsonSchema: { format: "date-time" }
  }),
  Schema.brand("Timestamp"),
  Schema.annotations({ identifier: "Timestamp", description: "ISO 8601 UTC timestamp with milliseconds" })
)
export type Timestamp = typeof Timestamp.Type

export const timestampFromMillis = (millis: number): Timestamp => new Date(millis).toISOString() as Timestamp

export const millisFromTimestamp = (timestamp: Timestamp): number => Date.parse(timestamp)

/** The current time as a Timestamp; always through `Clock`, so `TestClock` drives it. */
export const now: Effect.Effect<Timestamp> = Effect.clockWith((clock) =>
  Effect.succeed(timestampFromMillis(clock.unsafeCurrentTimeMillis()))
)
