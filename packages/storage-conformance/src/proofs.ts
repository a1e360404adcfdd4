import { expect } from "@effect/vitest"
import { type AccountId, makeId, PROOF_STATUSES, PROOF_TRANSITIONS, type ProofRecord, ProofsRepo, type ProofTransition, type Timestamp } from "@mzk/core"
import { Effect, Option } from "effect"
import type { ConformanceIt } from "./env.js"
import { freshAccount } from "./fixtures.js"

const at = (iso: string) => iso as Timestamp
export const FOREVER = at("9999-12-31T23:59:59.999Z")
export const T0 = at("2030-01-01T00:00:00.000Z")
export const T30 = at("2030-01-01T00:00:30.000Z")
export const T60 = at("2030-01-01T00:01:00.000Z")
export const T90 = at("2030-01-01T00:01:30.000Z")

export const proofRecord = (accountId: AccountId, overrides: Partial<ProofRecord> = {}) =>
  Effect.gen(function*() {
    const record: ProofRecord = {
      id: yield* makeId("proof"),
      account_id: accountId,
      batch_id: null,
      proving_system: "groth16",
      type: "range",
      circuit: "range",
      circuit_id: null,
      circuit_version: 1,
      status: "queued",
      inputs: { value: "5", min: "1", max: "9", list: ["1", "0"] },
      public_inputs: { min: "1", max: "9" },
      proof_blob: null,
      error: null,
      duration_ms: null,
      proving_ms: null,
      priority: "normal",
      deadline_at: null,
      attempts: 0,
      lease_expires_at: null,
      created_at: at("2030-01-01T00:00:00.000Z"),
      started_at: null,
      completed_at: null,
      finished_at: null,
      canceled_at: null,
      expires_at: null,
      metadata: {},
      ...overrides
    }
    return record
  })

export const queued = (accountId: AccountId, n: number) =>
  Effect.gen(function*() {
    const rows = yield* Effect.all(Array.from({ length: n }, () => proofRecord(accountId)))
    yield* (yield* ProofsRepo).insertMany(rows)
    return rows
  })

/**
 * The store is shared by every conformance test and `claimNext`/`expireDue` work across accounts,
 * so each test first takes every earlier test's claimable and expirable proofs out of the way
 * (leased until the year 9999, so they never come back).
 */
export const isolate = Effect.gen(function*() {
  const repo = yield* ProofsRepo
  for (;;) {
    const claimed = yield* repo.claimNext({ now: T90, leaseUntil: FOREVER, maxRunningPerAccount: 1_000_000, limit: 1000 })
    if (claimed.length === 0) break
  }
  while ((yield* repo.expireDue(FOREVER, 1000)).length > 0) { /* drain */ }
})

export const claim = (now: Timestamp, limit: number, maxRunningPerAccount = 10, leaseUntil = T60) =>
  Effect.flatMap(ProofsRepo, (repo) => repo.claimNext({ now, leaseUntil, maxRunningPerAccount, limit }))

export const completion = { proof_blob: "eyJwaV9hIjpbXX0=", public_inputs: { min: "1", max: "9" }, duration_ms: 1234, completed_at: T30, expires_at: T60 }

export const proofTests = (it: ConformanceIt, timeout: number) => {
  it.effect("proofs: insertMany then get within the owning account only (inputs and arrays kept)", () =>
    Effect.gen(function*() {
      const repo = yield* ProofsRepo
      const account = yield* freshAccount
      const batch = yield* makeId("batch")
      const rows = yield* Effect.all([proofRecord(account, { batch_id: batch }), proofRecord(account, { type: "multiplier", circuit: "multiplier", public_inputs: {} })])
      yield* repo.insertMany(rows)
      yield* repo.insertMany([])
      expect(yield* repo.get(account, rows[0]!.id)).toEqual(Option.some(rows[0]))
      expect(yield* repo.get(account, rows[1]!.id)).toEqual(Option.some(rows[1]))
      expect(Option.isNone(yield* repo.get(yield* freshAccount, rows[0]!.id))).toBe(true)
    }), timeout)

  it.effect("proofs: list pages newest first, both ways, filters by status, total counts the filtered set", () =>
    Effect.gen(function*() {
      yield* isolate
      const repo = yield* ProofsRepo
      const account = yield* freshAccount
      const rows = yield* queued(account, 5)
      yield* queued(yield* freshAccount, 1)
      const ids = rows.map((r) => r.id).sort()
      const newest = [...ids].reverse()
      const first = yield* repo.list(account, { limit: 2 })
      expect(first.items.map((r) => r.id)).toEqual(newest.slice(0, 2))
      expect([first.total, first.has_more]).toEqual([5, true])
      const last = yield* repo.list(account, { limit: 2, startingAfter: newest[3] })
      expect(last.items.map((r) => r.id)).toEqual(newest.slice(4))
      expect(last.has_more).toBe(false)
      const back = yield* repo.list(account, { limit: 2, endingBefore: newest[4] })
      expect([back.items.map((r) => r.id), back.has_more]).toEqual([newest.slice(2, 4), true])
      // Claims take turns across accounts: the other account's proof is one of the three.
      const claimed = yield* claim(T0, 3)
      expect(claimed.filter((r) => r.account_id === account).map((r) => r.id)).toEqual(ids.slice(0, 2))
      const running = yield* repo.list(account, { limit: 10, status: "running" })
      expect([running.items.map((r) => r.id), running.total, running.has_more]).toEqual([[ids[1], ids[0]], 2, false])
      const stillQueued = yield* repo.list(account, { limit: 1, status: "queued" })
      expect([stillQueued.items.map((r) => r.id), stillQueued.total, stillQueued.has_more]).toEqual([[ids[4]], 3, true])
      const queuedBack = yield* repo.list(account, { limit: 5, status: "queued", endingBefore: ids[2] })
      expect([queuedBack.items.map((r) => r.id), queuedBack.has_more]).toEqual([[ids[4], ids[3]], false])
    }), timeout)

  it.effect("proofs: claimNext takes the oldest queued first, marks them running with the lease, attempts + 1", () =>
    Effect.gen(function*() {
      yield* isolate
      const account = yield* freshAccount
      const rows = yield* queued(account, 3)
      const claimed = yield* claim(T0, 2)
      expect(claimed).toEqual(rows.slice(0, 2).map((r) => ({ ...r, status: "running", started_at: T0, lease_expires_at: T60, attempts: 1 })))
      expect(yield* (yield* ProofsRepo).get(account, rows[0]!.id)).toEqual(Option.some(claimed[0]))
      expect((yield* claim(T0, 5)).map((r) => r.id)).toEqual([rows[2]!.id])
      expect(yield* claim(T0, 5)).toEqual([])
      expect(yield* claim(T0, 0)).toEqual([])
    }), timeout)

  it.effect("proofs: claimNext keeps each account under maxRunningPerAccount but still serves other accounts", () =>
    Effect.gen(function*() {
      yield* isolate
      const busy = yield* freshAccount
      const quiet = yield* freshAccount
      const busyRows = yield* queued(busy, 5)
      const quietRows = yield* queued(quiet, 1)
      const first = yield* claim(T0, 10, 2)
      expect(first.map((r) => r.id)).toEqual([busyRows[0]!.id, busyRows[1]!.id, quietRows[0]!.id])
      expect(yield* claim(T0, 10, 2)).toEqual([])
      const done = yield* (yield* ProofsRepo).complete(busyRows[0]!.id, 1, completion)
      expect(Option.isSome(done)).toBe(true)
      expect((yield* claim(T0, 10, 2)).map((r) => r.id)).toEqual([busyRows[2]!.id])
      // A raised limit lets the rest through.
      expect((yield* claim(T0, 10, 4)).map((r) => r.id)).toEqual([busyRows[3]!.id, busyRows[4]!.id])
    }), timeout)

  it.effect("proofs: claimNext takes proofs in turns across accounts, the one running fewest first, so a long queue holds no one back", () =>
    Effect.gen(function*() {
      yield* isolate
      const repo = yield* ProofsRepo
      const busy = yield* freshAccount
      const quiet = yield* freshAccount
      const busyRows = yield* queued(busy, 30)
      // One slot: the busy account's oldest, then its next one (no other account waits).
      expect((yield* claim(T0, 1)).map((r) => r.id)).toEqual([busyRows[0]!.id])
      const [quietRow] = yield* queued(quiet, 2)
      // The busy account runs one, the quiet one none: the quiet account's proof is next, behind none of the 29.
      expect((yield* claim(T0, 1)).map((r) => r.id)).toEqual([quietRow!.id])
      // Both run one: turns alternate, oldest first within an account.
      const both = yield* claim(T0, 3)
      expect(both.map((r) => r.account_id).filter((a) => a === quiet)).toHaveLength(1)
      expect(both.filter((r) => r.account_id === busy).map((r) => r.id)).toEqual([busyRows[1]!.id, busyRows[2]!.id])
      // The cap still holds, counting what runs: 3 running of a cap of 10 leave room for 7.
      expect((yield* claim(T0, 100)).map((r) => r.id)).toEqual(busyRows.slice(3, 10).map((r) => r.id))
      expect((yield* repo.list(busy, { limit: 100, status: "running" })).total).toBe(10)
      expect(yield* claim(T0, 100)).toEqual([])
    }), timeout)

  it.effect("proofs: a lapsed lease is taken over; the old claim can no longer settle", () =>
    Effect.gen(function*() {
      yield* isolate
      const repo = yield* ProofsRepo
      const account = yield* freshAccount
      const [row] = yield* queued(account, 1)
      const [first] = yield* claim(T0, 1, 10, T60)
      expect(first?.attempts).toBe(1)
      expect(yield* claim(T30, 1)).toEqual([])
      const [taken] = yield* claim(T60, 1, 10, T90)
      expect(taken).toEqual({ ...row, status: "running", started_at: T60, lease_expires_at: T90, attempts: 2 })
      expect(Option.isNone(yield* repo.complete(row!.id, 1, completion))).toBe(true)
      expect(Option.isNone(yield* repo.fail(row!.id, 1, { error: { code: "timeout", message: "late" }, duration_ms: 1, finished_at: T90, expires_at: T90 }))).toBe(true)
      const done = yield* repo.complete(row!.id, 2, completion)
      expect(done).toEqual(Option.some({
        ...taken, ...completion, finished_at: completion.completed_at, status: "completed", inputs: null, error: null, lease_expires_at: null
      }))
    }), timeout)

  it.effect("proofs: a live lease counts against the account's running limit, a lapsed one does not", () =>
    Effect.gen(function*() {
      yield* isolate
      const account = yield* freshAccount
      const rows = yield* queued(account, 2)
      expect((yield* claim(T0, 1, 1, T60)).map((r) => r.id)).toEqual([rows[0]!.id])
      expect(yield* claim(T30, 5, 1)).toEqual([])
      // At T60 the first lease lapsed: the oldest candidate (the abandoned one) is taken first.
      expect((yield* claim(T60, 5, 1, T90)).map((r) => [r.id, r.attempts])).toEqual([[rows[0]!.id, 2]])
    }), timeout)

  it.effect("proofs: complete and fail apply only to a running proof with the claim's attempt", () =>
    Effect.gen(function*() {
      yield* isolate
      const repo = yield* ProofsRepo
      const account = yield* freshAccount
      const [a, b] = yield* queued(account, 2)
      expect(Option.isNone(yield* repo.complete(a!.id, 0, completion))).toBe(true)
      yield* claim(T0, 2)
      expect(Option.isNone(yield* repo.complete(a!.id, 2, completion))).toBe(true)
      const completed = yield* repo.complete(a!.id, 1, completion)
      expect(Option.map(completed, (r) => [r.status, r.proof_blob, r.public_inputs, r.duration_ms, r.completed_at, r.finished_at, r.expires_at, r.inputs, r.lease_expires_at]))
        .toEqual(Option.some(["completed", completion.proof_blob, completion.public_inputs, 1234, T30, T30, T60, null, null]))
      expect(Option.isNone(yield* repo.complete(a!.id, 1, completion))).toBe(true)
      expect(Option.isNone(yield* repo.fail(a!.id, 1, { error: { code: "internal", message: "x" }, duration_ms: 1, finished_at: T30, expires_at: T60 }))).toBe(true)
      const error = { code: "constraint_violation" as const, message: "Assert Failed" }
      const failed = yield* repo.fail(b!.id, 1, { error, duration_ms: 7, finished_at: T30, expires_at: T90 })
      // A failed proof has finished, not completed; it keeps the claim's start.
      expect(failed).toEqual(Option.some({
        ...b,
        status: "failed",
        attempts: 1,
        started_at: T0,
        inputs: null,
        error,
        duration_ms: 7,
        completed_at: null,
        finished_at: T30,
        expires_at: T90,
        lease_expires_at: null
      }))
      expect(yield* repo.get(account, b!.id)).toEqual(failed)
    }), timeout)

  it.effect("proofs: a failure that says the claimed proof never started clears its started_at", () =>
    Effect.gen(function*() {
      yield* isolate
      const repo = yield* ProofsRepo
      const account = yield* freshAccount
      const [row] = yield* queued(account, 1)
      yield* claim(T30, 1)
      const error = { code: "timeout" as const, message: "deadline passed while queued" }
      const failed = yield* repo.fail(row!.id, 1, { error, duration_ms: 0, proving_ms: null, finished_at: T30, expires_at: T90, started_at: null })
      expect(Option.map(failed, (r) => [r.status, r.started_at, r.completed_at, r.finished_at, r.duration_ms, r.proving_ms]))
        .toEqual(Option.some(["failed", null, null, T30, 0, null]))
      expect(yield* repo.get(account, row!.id)).toEqual(failed)
    }), timeout)

  it.effect("proofs: release hands a running claim back (queued, no lease, attempt uncounted) for anyone to claim at once", () =>
    Effect.gen(function*() {
      yield* isolate
      const repo = yield* ProofsRepo
      const account = yield* freshAccount
      const [row] = yield* queued(account, 1)
      expect(yield* repo.release(row!.id, 1)).toBe(false)
      const [claimed] = yield* claim(T0, 1, 10, T60)
      expect(yield* repo.release(row!.id, 2)).toBe(false)
      expect(yield* repo.release(row!.id, claimed!.attempts)).toBe(true)
      expect(yield* repo.get(account, row!.id)).toEqual(Option.some(row))
      expect(yield* repo.release(row!.id, claimed!.attempts)).toBe(false)
      // Long before the old lease would have lapsed, another claim takes it, with the same count.
      const [again] = yield* claim(T30, 1, 10, T90)
      expect(again).toEqual({ ...row, status: "running", started_at: T30, lease_expires_at: T90, attempts: 1 })
      const done = yield* repo.complete(row!.id, 1, completion)
      expect(Option.map(done, (r) => r.status)).toEqual(Option.some("completed"))
      expect(yield* repo.release(row!.id, 1)).toBe(false)
    }), timeout)

  it.effect("proofs: expireDue expires settled proofs due by now, earliest first, dropping blob and inputs", () =>
    Effect.gen(function*() {
      yield* isolate
      const repo = yield* ProofsRepo
      const account = yield* freshAccount
      const rows = yield* queued(account, 4)
      yield* claim(T0, 4)
      yield* repo.complete(rows[0]!.id, 1, { ...completion, expires_at: T60 })
      yield* repo.fail(rows[1]!.id, 1, { error: { code: "timeout", message: "slow" }, duration_ms: 60_000, finished_at: T0, expires_at: T30 })
      yield* repo.complete(rows[2]!.id, 1, { ...completion, expires_at: T90 })
      // rows[3] stays running: only settled proofs expire.
      expect(yield* repo.expireDue(T0, 10)).toEqual([])
      const firstBatch = yield* repo.expireDue(T60, 1)
      expect(firstBatch.map((r) => [r.id, r.status, r.proof_blob, r.inputs])).toEqual([[rows[1]!.id, "expired", null, null]])
      const second = yield* repo.expireDue(T60, 10)
      expect(second.map((r) => [r.id, r.status, r.proof_blob, r.expires_at])).toEqual([[rows[0]!.id, "expired", null, T60]])
      expect(yield* repo.expireDue(T60, 10)).toEqual([])
      expect(Option.map(yield* repo.get(account, rows[2]!.id), (r) => r.status)).toEqual(Option.some("completed"))
      expect(Option.map(yield* repo.get(account, rows[3]!.id), (r) => r.status)).toEqual(Option.some("running"))
      expect(Option.map(yield* repo.get(account, rows[0]!.id), (r) => [r.status, r.proof_blob])).toEqual(Option.some(["expired", null]))
    }), timeout)

  it.effect("proofs: queueDepth counts queued and running proofs over every account", () =>
    Effect.gen(function*() {
      yield* isolate
      const repo = yield* ProofsRepo
      const before = yield* repo.queueDepth
      const [first, second] = yield* Effect.all([freshAccount, freshAccount])
      yield* queued(first, 3)
      yield* queued(second, 2)
      expect(yield* repo.queueDepth).toEqual({ queued: before.queued + 5, running: before.running })
      const claimed = yield* claim(T0, 2)
      expect(yield* repo.queueDepth).toEqual({ queued: before.queued + 3, running: before.running + 2 })
      yield* repo.complete(claimed[0]!.id, 1, completion)
      expect(yield* repo.queueDepth).toEqual({ queued: before.queued + 3, running: before.running + 1 })
    }), timeout)

  it.effect("proofs race: concurrent claims never hand out a proof twice and hold every account's limit", () =>
    Effect.gen(function*() {
      yield* isolate
      const accounts = yield* Effect.all([freshAccount, freshAccount, freshAccount])
      for (const account of accounts) yield* queued(account, 8)
      const results = yield* Effect.all(Array.from({ length: 12 }, () => claim(T0, 3, 5)), { concurrency: "unbounded" })
      const ids = results.flat().map((r) => r.id)
      expect(new Set(ids).size).toBe(ids.length)
      expect(ids.length).toBe(15)
      for (const account of accounts) expect(results.flat().filter((r) => r.account_id === account).length).toBe(5)
    }), timeout)

  it.effect("proofs race: concurrent expireDue calls expire each proof once", () =>
    Effect.gen(function*() {
      yield* isolate
      const repo = yield* ProofsRepo
      const account = yield* freshAccount
      const rows = yield* queued(account, 6)
      yield* claim(T0, 6)
      for (const row of rows) yield* repo.complete(row.id, 1, completion)
      const results = yield* Effect.all(Array.from({ length: 6 }, () => repo.expireDue(T90, 2)), { concurrency: "unbounded" })
      const ids = results.flat().map((r) => r.id)
      expect(ids.length).toBe(6)
      expect(new Set(ids).size).toBe(6)
    }), timeout)

  it.effect("proofs: each transition of PROOF_TRANSITIONS moves a proof from its from-statuses only", () =>
    Effect.gen(function*() {
      const repo = yield* ProofsRepo
      const account = yield* freshAccount
      const failure = { error: { code: "internal" as const, message: "x" }, duration_ms: 1, finished_at: T30, expires_at: T60 }
      const claimEverything = { now: T90, leaseUntil: FOREVER, maxRunningPerAccount: 1_000_000, limit: 1000 }
      // Each operation of the repository that applies a transition, asked for one proof: did it move it?
      const apply: Record<ProofTransition, (row: ProofRecord) => Effect.Effect<boolean, unknown>> = {
        claim: (row) => Effect.map(repo.claimNext(claimEverything), (rows) => rows.some((r) => r.id === row.id)),
        complete: (row) => Effect.map(repo.complete(row.id, row.attempts, completion), Option.isSome),
        fail: (row) => Effect.map(repo.fail(row.id, row.attempts, failure), Option.isSome),
        overdue: (row) => Effect.map(repo.failOverdue(T90, 1000, failure), (rows) => rows.some((r) => r.id === row.id)),
        release: (row) => repo.release(row.id, row.attempts),
        cancel: (row) => Effect.map(repo.cancel(account, { proof: row.id }, { canceled_at: T30, expires_at: T60 }), (rows) => rows.length === 1),
        expire: (row) => Effect.map(repo.expireDue(T90, 1000), (rows) => rows.some((r) => r.id === row.id))
      }
      const seen: Array<string> = []
      for (const [transition, { from, to }] of Object.entries(PROOF_TRANSITIONS) as Array<[ProofTransition, { from: ReadonlyArray<string>; to: string }]>) {
        for (const status of PROOF_STATUSES) {
          yield* isolate
          const settled = status === "completed" || status === "failed" || status === "canceled" || status === "expired"
          // Due for everything: a running proof's lease has lapsed, a settled one's retention is over.
          // Past its deadline too, for the overdue sweep.
          const row = yield* proofRecord(account, {
            status,
            attempts: 1,
            lease_expires_at: status === "running" ? T0 : null,
            expires_at: settled ? T30 : null,
            deadline_at: T30
          })
          yield* repo.insertMany([row])
          const moved = yield* apply[transition](row)
          const after = Option.getOrThrow(yield* repo.get(account, row.id))
          seen.push(`${transition} ${status}: ${moved ? `→ ${after.status}` : `stays ${after.status}`}`)
          expect(moved, `${transition} from ${status}`).toBe(from.includes(status))
          expect(after.status, `${transition} from ${status}`).toBe(moved ? to : status)
        }
      }
      expect(seen.length).toBe(Object.keys(PROOF_TRANSITIONS).length * PROOF_STATUSES.length)
    }), timeout)
}
