import { Context } from "effect"

/** A proof moved to `status` (after the write that moved it committed). */
export interface ProofObservation {
  readonly status: "queued" | "running" | "completed" | "failed" | "canceled" | "expired"
  /** The circuit's name; `builtin` tells a built-in circuit from an account's own. */
  readonly circuit: string
  readonly builtin: boolean
  /** Proving time, for `completed` and `failed`. */
  readonly duration_ms?: number | undefined
}

/** One attempt to deliver a webhook event, as recorded. */
export interface DeliveryObservation {
  readonly outcome: "succeeded" | "failed"
  readonly latency_ms: number
  /** The attempt was the delivery's last: it succeeded, or its retries are spent. */
  readonly final: boolean
}

/** A request the HTTP layer answered. */
export interface RequestObservation {
  readonly method: string
  /** The route's template (`/api/v1/proofs/:id`), never the raw path, so label values stay few. */
  readonly route: string
  readonly status: number
  readonly seconds: number
}

/**
 * Where the service reports what it does, for metrics: a port, so the core names no metrics
 * library. Calls are synchronous and must be cheap (they sit on the request path and in the
 * loops); the default records nothing.
 */
export interface TelemetryShape {
  readonly proof: (observation: ProofObservation) => void
  readonly delivery: (observation: DeliveryObservation) => void
  /** A metered request refused by `policy`: the key's minute or the account's day. */
  readonly rateLimited: (policy: "key" | "daily") => void
  readonly request: (observation: RequestObservation) => void
}

const ignore = () => undefined

export const NO_TELEMETRY: TelemetryShape = { proof: ignore, delivery: ignore, rateLimited: ignore, request: ignore }

export class Telemetry extends Context.Reference<Telemetry>()("@mzk/core/Telemetry", {
  defaultValue: (): TelemetryShape => NO_TELEMETRY
}) {}
