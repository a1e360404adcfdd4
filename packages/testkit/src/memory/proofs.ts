import { claimHolds, mayApply, PROOF_TRANSITIONS, type ProofRecord, ProofsRepo, type ProofTransition, takeInTurns } from "@mzk/core"
import { Effect, Option } from "effect"
import { byId, type MemoryDb, paginate } from "./db.js"

export const memoryProofs = (db: MemoryDb) => {
  const proofs = db.table<ProofRecord>("proofs")
  const own = (accountId: string, id: string) => {
    const proof = proofs.get(id)
    return proof !== undefined && proof.account_id === accountId ? proof : undefined
  }

  /** The conditional write behind complete, fail and release: only the current claim may settle. */
  const settle = (transition: ProofTransition, id: string, attempt: number, change: (row: ProofRecord) => ProofRecord) =>
    db.write(Effect.gen(function*() {
      const row = proofs.get(id)
      yield* Effect.yieldNow()
      if (row === undefined || !mayApply(transition, row.status) || row.attempts !== attempt) return Option.none()
      const updated: ProofRecord = { ...change(row), status: PROOF_TRANSITIONS[transition].to }
      proofs.set(id, updated)
      return Option.some(updated)
    }))

  return ProofsRepo.of({
    insertMany: (records) => db.write(Effect.sync(() => records.forEach((record) => proofs.set(record.id, record)))),
    get: (accountId, id) => Effect.sync(() => Option.fromNullable(own(accountId, id))),
    list: (accountId, query) =>
      Effect.sync(() =>
        paginate(
          [...proofs.values()].filter((p) => p.account_id === accountId && (query.status === undefined || p.status === query.status)),
          query
        )
      ),
    claimNext: ({ leaseUntil, limit, maxRunningPerAccount, now }) =>
      db.write(Effect.gen(function*() {
        const rows = [...proofs.values()].sort(byId)
        const running = new Map<string, number>()
        for (const row of rows) {
          if (row.status === "running" && row.lease_expires_at !== null && row.lease_expires_at > now) {
            running.set(row.account_id, (running.get(row.account_id) ?? 0) + 1)
          }
        }
        // A running proof is a candidate only once its lease has lapsed.
        const candidates = rows.filter((row) =>
          mayApply("claim", row.status) &&
          (row.status !== "running" || row.lease_expires_at === null || row.lease_expires_at <= now)
        )
        yield* Effect.yieldNow()
        const picked = takeInTurns(candidates, { limit, owner: (row) => row.account_id, cap: maxRunningPerAccount, held: running })
        const claimed: Array<ProofRecord> = []
        for (const row of picked.sort(byId)) {
          const updated: ProofRecord = {
            ...row,
            status: PROOF_TRANSITIONS.claim.to,
            started_at: now,
            lease_expires_at: leaseUntil,
            attempts: row.attempts + 1
          }
          proofs.set(row.id, updated)
          claimed.push(updated)
        }
        return claimed
      })),
    complete: (id, attempt, completion) =>
      settle("complete", id, attempt, (row) => ({
        ...row,
        ...completion,
        inputs: null,
        error: null,
        lease_expires_at: null
      })),
    fail: (id, attempt, failure) =>
      settle("fail", id, attempt, (row) => ({
        ...row,
        ...failure,
        inputs: null,
        proof_blob: null,
        lease_expires_at: null
      })),
    release: (id, attempt) =>
      Effect.map(
        settle("release", id, attempt, (row) => ({ ...row, lease_expires_at: null, started_at: null, attempts: row.attempts - 1 })),
        Option.isSome
      ),
    cancel: (accountId, target, cancellation) =>
      db.write(Effect.gen(function*() {
        const targeted = "proof" in target
          ? [own(accountId, target.proof)].filter((row) => row !== undefined)
          : [...proofs.values()].filter((row) => row.account_id === accountId && row.batch_id === target.batch)
        yield* Effect.yieldNow()
        return targeted.filter((row) => mayApply("cancel", row.status)).sort(byId).map((row) => {
          const updated: ProofRecord = {
            ...row,
            ...cancellation,
            status: PROOF_TRANSITIONS.cancel.to,
            inputs: null,
            lease_expires_at: null
          }
          proofs.set(row.id, updated)
          return updated
        })
      })),
    listBatch: (accountId, batchId) =>
      Effect.sync(() => [...proofs.values()].filter((row) => row.account_id === accountId && row.batch_id === batchId).sort(byId)),
    lostClaims: (claims) =>
      Effect.sync(() =>
        claims.filter((claim) => {
          const row = proofs.get(claim.id)
          return row === undefined || !claimHolds(claim.attempts, row)
        }).map((claim) => claim.id)
      ),
    expireDue: (now, limit) =>
      db.write(Effect.gen(function*() {
        const due = [...proofs.values()]
          .filter((p) => mayApply("expire", p.status) && p.expires_at !== null && p.expires_at <= now)
          .sort((a, b) => (a.expires_at! < b.expires_at! ? -1 : a.expires_at! > b.expires_at! ? 1 : byId(a, b)))
          .slice(0, limit)
        yield* Effect.yieldNow()
        return due.map((row) => {
          const updated: ProofRecord = { ...row, status: PROOF_TRANSITIONS.expire.to, proof_blob: null, inputs: null }
          proofs.set(row.id, updated)
          return updated
        })
      })),
    queueDepth: Effect.sync(() => {
      let queued = 0
      let running = 0
      for (const proof of proofs.values()) {
        if (proof.status === "queued") queued++
        else if (proof.status === "running") running++
      }
      return { queued, running }
    })
  })
}
