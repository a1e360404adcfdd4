import type { ProofStatus } from "./proof.js"

/**
 * The proof lifecycle as a value: each operation of the job queue, the statuses it may take a
 * proof from, and the status it leaves it in. Stores apply an operation only to proofs in one of
 * its `from` statuses (a conditional write in SQL, a filter in memory), so this table is the one
 * statement of which moves exist: `queued → running → completed | failed → expired`, a queued
 * proof past its deadline failed, a queued or
 * running proof canceled (`canceled → expired`), a running proof handed back to `queued`, and a
 * running proof whose lease lapsed claimed again.
 */
export const PROOF_TRANSITIONS = {
  /** A worker takes a proof: a queued one, or a running one whose lease has lapsed (its worker died). */
  claim: { from: ["queued", "running"], to: "running" },
  complete: { from: ["running"], to: "completed" },
  fail: { from: ["running"], to: "failed" },
  /** A queued proof whose deadline (`timeout_ms`) passed before a worker took it fails as `timeout`. */
  overdue: { from: ["queued"], to: "failed" },
  /** A worker that stops on purpose hands its proof back. */
  release: { from: ["running"], to: "queued" },
  /**
   * The account stops a proof that has not settled (`POST /proofs/:id/cancel`). A running proof's
   * worker finds its claim gone, stops proving, and its settling writes find nothing.
   */
  cancel: { from: ["queued", "running"], to: "canceled" },
  /** Retention: a settled or canceled proof loses its blob. */
  expire: { from: ["completed", "failed", "canceled"], to: "expired" }
} as const satisfies Record<string, { readonly from: ReadonlyArray<ProofStatus>; readonly to: ProofStatus }>

export type ProofTransition = keyof typeof PROOF_TRANSITIONS

/** True when `transition` may be applied to a proof in `status`. */
export const mayApply = (transition: ProofTransition, status: ProofStatus): boolean =>
  (PROOF_TRANSITIONS[transition].from as ReadonlyArray<ProofStatus>).includes(status)

/** The statuses a proof in `status` can move to next; none once it is expired. */
export const nextStatuses = (status: ProofStatus): ReadonlyArray<ProofStatus> =>
  [...new Set(Object.values(PROOF_TRANSITIONS).filter((t) => (t.from as ReadonlyArray<ProofStatus>).includes(status)).map((t) => t.to))]

/**
 * A claim (a worker's, by its `attempts`) still holds a proof while the proof runs under it, or
 * once it settled it (`complete` and `fail` are conditional on the attempt: no one else could
 * have). Otherwise the claim is lost: the proof was canceled, or taken over by a later claim.
 */
export const claimHolds = (attempt: number, proof: { readonly status: ProofStatus; readonly attempts: number }): boolean =>
  proof.attempts === attempt &&
  (proof.status === PROOF_TRANSITIONS.claim.to || proof.status === PROOF_TRANSITIONS.complete.to || proof.status === PROOF_TRANSITIONS.fail.to)
