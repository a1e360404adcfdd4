import { claimHolds, mayApply, nextStatuses, PROOF_STATUSES, PROOF_TRANSITIONS, type ProofStatus } from "@mzk/core"
import { describe, expect, it } from "vitest"

describe("the proof lifecycle table", () => {
  it("is queued → running → completed | failed → expired, queued or running → canceled → expired, queued past its deadline → failed, a running proof handed back or taken over", () => {
    const moves = Object.fromEntries(PROOF_STATUSES.map((status) => [status, [...nextStatuses(status)].sort()]))
    expect(moves).toEqual({
      queued: ["canceled", "failed", "running"],
      running: ["canceled", "completed", "failed", "queued", "running"],
      completed: ["expired"],
      failed: ["expired"],
      canceled: ["expired"],
      expired: []
    })
  })

  it("reaches every status from queued, and nothing leaves expired", () => {
    const reached = new Set<ProofStatus>(["queued"])
    for (let changed = true; changed;) {
      changed = false
      for (const status of [...reached]) {
        for (const next of nextStatuses(status)) if (!reached.has(next)) changed = reached.add(next) !== undefined
      }
    }
    expect([...reached].sort()).toEqual([...PROOF_STATUSES].sort())
    expect(Object.keys(PROOF_TRANSITIONS).filter((t) => mayApply(t as keyof typeof PROOF_TRANSITIONS, "expired"))).toEqual([])
  })

  it("settles only running proofs, cancels only unsettled ones, and expires only settled or canceled ones", () => {
    expect(PROOF_STATUSES.filter((s) => mayApply("complete", s))).toEqual(["running"])
    expect(PROOF_STATUSES.filter((s) => mayApply("fail", s))).toEqual(["running"])
    expect(PROOF_STATUSES.filter((s) => mayApply("release", s))).toEqual(["running"])
    expect(PROOF_STATUSES.filter((s) => mayApply("cancel", s))).toEqual(["queued", "running"])
    expect(PROOF_STATUSES.filter((s) => mayApply("expire", s))).toEqual(["completed", "failed", "canceled"])
    expect(PROOF_STATUSES.filter((s) => mayApply("claim", s))).toEqual(["queued", "running"])
    expect(PROOF_STATUSES.filter((s) => mayApply("overdue", s))).toEqual(["queued"])
  })

  it("a claim holds its proof while it runs under it and once it settled it; canceled, handed back or taken over, it is lost", () => {
    expect(PROOF_STATUSES.filter((status) => claimHolds(2, { status, attempts: 2 }))).toEqual(["running", "completed", "failed"])
    expect(PROOF_STATUSES.filter((status) => claimHolds(2, { status, attempts: 3 }))).toEqual([])
  })
})
