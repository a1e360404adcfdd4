/**
 * What a data migration must do, as rows before and after it, for both dialects' migration tests
 * (their stores hold the same columns). Keyed by `at`, an ISO timestamp the rows are placed after.
 */

/**
 * Proofs as the code before 0021_proof_timeline left them (of account `acct_1`): completed, failed,
 * failed by the worker's claim past the deadline, failed by the deadline sweep, canceled while
 * running, queued.
 */
export const PROOFS_BEFORE_0021 = (at: string) => {
  const s = (seconds: number) => new Date(Date.parse(at) + seconds * 1000).toISOString()
  const overdue = JSON.stringify({ code: "timeout", message: "The request's deadline (timeout_ms) passed while the proof was queued; it was never started" })
  const proof = (id: string, status: string, fields: Record<string, unknown>) => ({
    id, account_id: "acct_1", batch_id: null, type: "multiplier", circuit: "multiplier", circuit_id: null, status, inputs: null,
    public_inputs: "{}", proof_blob: null, error: null, duration_ms: null, attempts: 1, lease_expires_at: null, created_at: at,
    started_at: null, completed_at: null, canceled_at: null, expires_at: null, ...fields
  })
  return [
    proof("proof_1", "completed", { started_at: s(1), completed_at: s(3), duration_ms: 1990 }),
    proof("proof_2", "failed", { error: JSON.stringify({ code: "constraint_violation", message: "x" }), started_at: s(1), completed_at: s(2), duration_ms: 995 }),
    proof("proof_3", "failed", { error: overdue, started_at: s(5), completed_at: s(5), duration_ms: 2 }),
    proof("proof_4", "failed", { error: overdue, completed_at: s(5), duration_ms: 0 }),
    proof("proof_5", "canceled", { started_at: s(1), canceled_at: s(4) }),
    proof("proof_6", "queued", { attempts: 0 })
  ]
}

/** The same proofs after 0021: `id, started_at, completed_at, finished_at, duration_ms`, by id. */
export const PROOFS_AFTER_0021 = (at: string) => {
  const s = (seconds: number) => new Date(Date.parse(at) + seconds * 1000).toISOString()
  return [
    { id: "proof_1", started_at: s(1), completed_at: s(3), finished_at: s(3), duration_ms: 1990 },
    { id: "proof_2", started_at: s(1), completed_at: null, finished_at: s(2), duration_ms: 995 },
    { id: "proof_3", started_at: null, completed_at: null, finished_at: s(5), duration_ms: 0 },
    { id: "proof_4", started_at: null, completed_at: null, finished_at: s(5), duration_ms: 0 },
    { id: "proof_5", started_at: s(1), completed_at: null, finished_at: s(4), duration_ms: null },
    { id: "proof_6", started_at: null, completed_at: null, finished_at: null, duration_ms: null }
  ]
}
