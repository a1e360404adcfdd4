import { Effect } from "effect"
import type { TelemetryShape } from "../kernel/telemetry.js"
import type { ProofRecord } from "./proof.js"

type Observed = "queued" | "running" | "completed" | "failed" | "canceled" | "expired"

/**
 * A proof's move to `status`, where operators see it: one structured log line (ids, circuit,
 * attempt, duration, error code; never inputs, which may be private) and the metrics port. Called
 * once the write that moved the proof has committed, so neither reports a rolled-back change.
 */
export const observeProof = (telemetry: TelemetryShape, record: ProofRecord, status: Observed): Effect.Effect<void> =>
  Effect.suspend(() => {
    const settled = status === "completed" || status === "failed"
    telemetry.proof({
      status,
      circuit: record.circuit,
      builtin: record.circuit_id === null,
      duration_ms: settled ? record.duration_ms ?? undefined : undefined
    })
    const annotations: Record<string, unknown> = {
      event: "proof.status",
      proof_id: record.id,
      account_id: record.account_id,
      status,
      circuit: record.circuit
    }
    if (record.circuit_id !== null) annotations.circuit_id = record.circuit_id
    if (record.batch_id !== null) annotations.batch_id = record.batch_id
    if (status === "running") annotations.attempt = record.attempts
    if (settled && record.duration_ms !== null) annotations.duration_ms = record.duration_ms
    if (status === "failed" && record.error !== null) annotations.error_code = record.error.code
    return Effect.annotateLogs(Effect.logInfo(`proof ${status}`), annotations)
  })
