import { Context } from "effect"

/** How long events are kept, and how their retention sweep runs. Every one is a setting of `mzk serve`/`mzk worker`. */
export interface EventsConfigShape {
  /**
   * Events older than this are deleted, with their settled deliveries and attempts: what
   * `GET /events` can list, and how far back a recovery may reach.
   */
  readonly retentionMs: number
  readonly sweepIntervalMs: number
  /** Events deleted per transaction, so one sweep never holds a long transaction. */
  readonly sweepBatchSize: number
}

export const DEFAULT_EVENTS_CONFIG: EventsConfigShape = {
  retentionMs: 30 * 86_400_000,
  sweepIntervalMs: 3_600_000,
  sweepBatchSize: 500
}

export class EventsConfig extends Context.Reference<EventsConfig>()("@mzk/core/EventsConfig", {
  defaultValue: (): EventsConfigShape => DEFAULT_EVENTS_CONFIG
}) {}
