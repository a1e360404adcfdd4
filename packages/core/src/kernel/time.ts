import { Effect, Schema } from "effect"

/** ISO 8601 UTC with milliseconds, e.g. `2026-11-22T10:00:00.000Z`; sorts as text in time order. */
export const Timestamp = Schema.String.pipe(
  Schema.pattern(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
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
