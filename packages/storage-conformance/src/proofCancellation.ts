import { expect } from "@effect/vitest"
import {
  type AccountId,
  DEFAULT_LIMITS,
  makeId,
  type Principal,
  type ProofId,
  Proofs,
  ProofsRepo,
  RateLimits,
  RateLimitsRepo,
  SCOPES
} from "@mzk/core"
import { Effect, Either, Option } from "effect"
import type { ConformanceIt } from "./env.js"
import { freshAccount } from "./fixtures.js"
import { claim, completion, FOREVER, isolate, proofRecord, queued, T0, T30, T60, T90 } from "./proofs.js"

const CANCELED = { canceled_at: T30, expires_at: T90 }

const sessionOf = (account_id: AccountId): Principal => ({ account_id, scopes: SCOPES, via: { kind: "session" } })

/** What the account's daily quota has left, without charging it. */
const dailyRemaining = (principal: Principal) =>
  Effect.map(
    Effect.flatMap(RateLimits, (r) => r.admitProofRequest(principal.account_id, { proofs: 0 })),
    (windows) => windows.find((w) => w.policy === "daily")!.remaining
  )

export const proofCancellationTests = (it: ConformanceIt, timeout: number) => {
  it.effect("proofs: cancel moves a queued or running proof to canceled, drops inputs and lease, keeps attempts and started_at", () =>
    Effect.gen(function*() {
      yield* isolate
      const repo = yield* ProofsRepo
      const account = yield* freshAccount
      const [first, queuedOne] = yield* queued(account, 2)
      // A claim takes the oldest: `first` runs, `queuedOne` waits.
      const [running] = yield* claim(T0, 1)
      expect(running!.id).toBe(first!.id)

      const fromRunning = yield* repo.cancel(account, { proof: running!.id }, CANCELED)
      // A cancel finishes the proof: its finished_at is its canceled_at.
      expect(fromRunning).toEqual([{ ...running, status: "canceled", inputs: null, lease_expires_at: null, ...CANCELED, finished_at: T30 }])
      const fromQueued = yield* repo.cancel(account, { proof: queuedOne!.id }, CANCELED)
      expect(fromQueued).toEqual([{ ...queuedOne, status: "canceled", inputs: null, ...CANCELED, finished_at: T30 }])
      expect(yield* repo.get(account, queuedOne!.id)).toEqual(Option.some(fromQueued[0]))

      // Once canceled: a second cancel, the old claim's settling writes and a claim find nothing.
      expect(yield* repo.cancel(account, { proof: running!.id }, CANCELED)).toEqual([])
      expect(Option.isNone(yield* repo.complete(running!.id, 1, completion))).toBe(true)
      expect(Option.isNone(yield* repo.fail(running!.id, 1, { error: { code: "internal", message: "x" }, duration_ms: 1, finished_at: T30, expires_at: T60 })))
        .toBe(true)
      expect(yield* repo.release(running!.id, 1)).toBe(false)
      expect(yield* claim(T90, 10, 100)).toEqual([])
      expect(Option.map(yield* repo.get(account, running!.id), (r) => r.status)).toEqual(Option.some("canceled"))
    }), timeout)

  it.effect("proofs: cancel moves nothing of another account, nor a settled proof, nor an unknown id", () =>
    Effect.gen(function*() {
      yield* isolate
      const repo = yield* ProofsRepo
      const account = yield* freshAccount
      const other = yield* freshAccount
      const [mine, done] = yield* queued(account, 2)
      yield* claim(T0, 2)
      yield* repo.complete(done!.id, 1, completion)
      expect(yield* repo.cancel(other, { proof: mine!.id }, CANCELED)).toEqual([])
      expect(yield* repo.cancel(account, { proof: done!.id }, CANCELED)).toEqual([])
      expect(yield* repo.cancel(account, { proof: yield* makeId("proof") }, CANCELED)).toEqual([])
      expect(Option.map(yield* repo.get(account, mine!.id), (r) => r.status)).toEqual(Option.some("running"))
      expect(Option.map(yield* repo.get(account, done!.id), (r) => r.status)).toEqual(Option.some("completed"))
    }), timeout)

  it.effect("proofs: a batch cancel takes the batch's queued and running proofs only; listBatch reads the batch in id order", () =>
    Effect.gen(function*() {
      yield* isolate
      const repo = yield* ProofsRepo
      const account = yield* freshAccount
      const other = yield* freshAccount
      const batch = yield* makeId("batch")
      const rows = yield* Effect.all(Array.from({ length: 4 }, () => proofRecord(account, { batch_id: batch })))
      const outsider = yield* proofRecord(account)
      const foreign = yield* proofRecord(other, { batch_id: yield* makeId("batch") })
      yield* repo.insertMany([...rows, outsider])
      // rows[0] completes, rows[1] runs, rows[2] and rows[3] wait.
      yield* claim(T0, 2)
      yield* repo.insertMany([foreign])
      yield* repo.complete(rows[0]!.id, 1, completion)

      expect(yield* repo.cancel(other, { batch }, CANCELED)).toEqual([])
      const canceled = yield* repo.cancel(account, { batch }, CANCELED)
      expect(canceled.map((r) => [r.id, r.status, r.started_at, r.inputs])).toEqual([
        [rows[1]!.id, "canceled", T0, null],
        [rows[2]!.id, "canceled", null, null],
        [rows[3]!.id, "canceled", null, null]
      ])
      expect(yield* repo.cancel(account, { batch }, CANCELED)).toEqual([])
      const listed = yield* repo.listBatch(account, batch)
      expect(listed.map((r) => [r.id, r.status])).toEqual([
        [rows[0]!.id, "completed"],
        [rows[1]!.id, "canceled"],
        [rows[2]!.id, "canceled"],
        [rows[3]!.id, "canceled"]
      ])
      expect(listed[1]).toEqual(canceled[0])
      expect(yield* repo.listBatch(other, batch)).toEqual([])
      expect(yield* repo.listBatch(account, yield* makeId("batch"))).toEqual([])
      // The batch-less proof and the other account's batch were left alone.
      expect(Option.map(yield* repo.get(account, outsider.id), (r) => r.status)).toEqual(Option.some("queued"))
      expect(Option.map(yield* repo.get(other, foreign.id), (r) => r.status)).toEqual(Option.some("queued"))
    }), timeout)

  it.effect("proofs: lostClaims names the claims whose proof moved on without them: canceled, taken over, unknown; not one they settled", () =>
    Effect.gen(function*() {
      yield* isolate
      const repo = yield* ProofsRepo
      const account = yield* freshAccount
      yield* queued(account, 4)
      const [kept, canceled, done] = yield* claim(T0, 3, 10, FOREVER)
      // The fourth is claimed under a short lease, which lapses, and another claim takes it over.
      const [takenOver] = yield* claim(T0, 1, 10, T30)
      expect((yield* claim(T30, 1, 10, T60)).map((r) => [r.id, r.attempts])).toEqual([[takenOver!.id, 2]])
      yield* repo.cancel(account, { proof: canceled!.id }, CANCELED)
      yield* repo.complete(done!.id, 1, completion)
      const unknown = yield* makeId("proof")
      const claims = [kept!, canceled!, done!, takenOver!].map((r) => ({ id: r.id, attempts: 1 }))
      const lost = yield* repo.lostClaims([...claims, { id: unknown, attempts: 1 }])
      expect([...lost].sort()).toEqual([canceled!.id, takenOver!.id, unknown].sort())
      expect(yield* repo.lostClaims([claims[0]!, claims[2]!])).toEqual([])
      // The claim that took over holds it; a claim of another attempt of a settled proof does not.
      expect(yield* repo.lostClaims([{ id: takenOver!.id, attempts: 2 }])).toEqual([])
      expect(yield* repo.lostClaims([{ id: done!.id, attempts: 2 }])).toEqual([done!.id])
      expect(yield* repo.lostClaims([])).toEqual([])
    }), timeout)

  it.effect("proofs: a canceled proof expires with the settled ones once its expires_at is due", () =>
    Effect.gen(function*() {
      yield* isolate
      const repo = yield* ProofsRepo
      const account = yield* freshAccount
      const [row] = yield* queued(account, 1)
      yield* repo.cancel(account, { proof: row!.id }, { canceled_at: T0, expires_at: T60 })
      expect(yield* repo.expireDue(T30, 10)).toEqual([])
      const expired = yield* repo.expireDue(T60, 10)
      expect(expired.map((r) => [r.id, r.status, r.canceled_at])).toEqual([[row!.id, "expired", T0]])
    }), timeout)

  it.effect("rate limits: refund gives units back to the window they were charged in only, never below zero", () =>
    Effect.gen(function*() {
      const repo = yield* RateLimitsRepo
      const bucket = `conformance-refund-${yield* makeId("proof")}`
      const day = 86_400_000
      const charge = (window_start: number, cost: number) => repo.consume([{ bucket, window_start, limit: 100, cost }])
      yield* charge(day, 5)
      yield* repo.refund([{ bucket, window_start: day, amount: 2 }])
      expect((yield* charge(day, 0)).counts).toEqual([3])
      // Another window's refund, or one for a bucket never charged, changes nothing.
      yield* repo.refund([{ bucket, window_start: 0, amount: 2 }, { bucket: `${bucket}-never`, window_start: day, amount: 1 }])
      expect((yield* charge(day, 0)).counts).toEqual([3])
      yield* repo.refund([{ bucket, window_start: day, amount: 10 }])
      expect((yield* charge(day, 0)).counts).toEqual([0])
      // Once the counter moved on to the next window, the old window's refund is void.
      yield* charge(2 * day, 4)
      yield* repo.refund([{ bucket, window_start: day, amount: 1 }])
      expect((yield* charge(2 * day, 0)).counts).toEqual([4])
    }), timeout)

  it.effect("proofs race: cancels against claims and completions: each proof ends completed or canceled, never both; refunded once", () =>
    Effect.gen(function*() {
      yield* isolate
      const repo = yield* ProofsRepo
      const proofs = yield* Proofs
      const principal = sessionOf(yield* freshAccount)
      const n = 16
      const item = { type: "multiplier", inputs: { a: "3", b: "5" } }
      const batch = yield* proofs.createBatch(principal.account_id, { proofs: Array.from({ length: 2 * n }, () => item) })
      expect(yield* dailyRemaining(principal)).toBe(DEFAULT_LIMITS.proofsPerDayPerAccount - 2 * n)
      const ids = batch.proofs.map((p) => p.proof_id)
      const [running, waiting] = [ids.slice(0, n), ids.slice(n)]
      expect((yield* claim(T0, n, 1000, FOREVER)).map((r) => r.id)).toEqual(running)
      // Staggered starts, so that each store sees both orders among the proofs.
      const after = (turns: number) => <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.zipRight(Effect.repeatN(Effect.yieldNow(), turns), effect)
      const cancelTwice = (id: ProofId, i: number) =>
        [0, 1].map((j) => after((i + 3 * j) % 5)(Effect.either(proofs.cancel(principal.account_id, id))))

      // Running proofs: their worker's completion against two cancels each. Queued ones: a claim of
      // all of them against two cancels each.
      const [completions, claimed, cancels] = yield* Effect.all([
        Effect.all(running.map((id, i) => after(i % 4)(repo.complete(id, 1, completion))), { concurrency: "unbounded" }),
        after(2)(claim(T0, n, 1000, FOREVER)),
        Effect.all([...running, ...waiting].flatMap(cancelTwice), { concurrency: "unbounded" })
      ], { concurrency: "unbounded" })

      const completed = running.filter((_, i) => Option.isSome(completions[i]!))
      const canceled = cancels.filter(Either.isRight).map((r) => r.right.proof_id)
      expect(new Set(cancels.filter(Either.isLeft).map((r) => r.left._tag))).toEqual(new Set(["ProofNotCancelable"]))
      // Each proof was canceled by one request at most, and canceled exactly when no completion won.
      expect(new Set(canceled).size).toBe(canceled.length)
      expect(canceled.filter((id) => completed.includes(id))).toEqual([])
      expect(running.filter((id) => !completed.includes(id) && !canceled.includes(id))).toEqual([])
      // A queued proof is canceled, or claimed and still running; claimed then canceled, its claim is lost.
      for (const id of ids) {
        const row = Option.getOrThrow(yield* repo.get(principal.account_id, id))
        expect(row.status, id).toBe(canceled.includes(id) ? "canceled" : completed.includes(id) ? "completed" : "running")
      }
      const lost = yield* repo.lostClaims(claimed.map((r) => ({ id: r.id, attempts: r.attempts })))
      expect([...lost].sort()).toEqual(claimed.map((r) => r.id).filter((id) => canceled.includes(id)).sort())
      console.log(`cancel race: ${completed.length} completed, ${canceled.length} canceled, ${claimed.length} claimed while canceling`)
      expect(yield* dailyRemaining(principal)).toBe(DEFAULT_LIMITS.proofsPerDayPerAccount - 2 * n + canceled.length)

      // A batch cancel then takes what is left running, and refunds those alone.
      const rest = yield* proofs.cancelBatch(principal.account_id, batch.batch_id)
      const left = 2 * n - completed.length - canceled.length
      expect([rest.canceled_count, rest.proofs.length]).toEqual([left, 2 * n])
      expect(yield* proofs.cancelBatch(principal.account_id, batch.batch_id)).toMatchObject({ canceled_count: 0 })
      expect(yield* dailyRemaining(principal)).toBe(DEFAULT_LIMITS.proofsPerDayPerAccount - completed.length)
    }), timeout)
}
