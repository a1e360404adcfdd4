import { expect } from "@effect/vitest"
import { ProofsRepo, RateLimitsRepo, type Timestamp } from "@mzk/core"
import { Effect, Option } from "effect"
import type { ConformanceIt } from "./env.js"
import { freshAccount } from "./fixtures.js"
import { claim, isolate, proofRecord, T0, T30, T60, T90 } from "./proofs.js"

const at = (iso: string) => iso as Timestamp

/** What a store must do for scheduling: priorities, queue positions, deadlines, the usage report. */
export const schedulingTests = (it: ConformanceIt, timeout: number) => {
  it.effect("scheduling: a claim takes an account's queued proofs high, normal, low, oldest first within each; accounts still take turns", () =>
    Effect.gen(function*() {
      yield* isolate
      const repo = yield* ProofsRepo
      const busy = yield* freshAccount
      const quiet = yield* freshAccount
      const low = yield* proofRecord(busy, { priority: "low" })
      const normal = yield* proofRecord(busy)
      const high1 = yield* proofRecord(busy, { priority: "high" })
      const high2 = yield* proofRecord(busy, { priority: "high" })
      yield* repo.insertMany([low, normal, high1, high2])
      const other = yield* proofRecord(quiet, { priority: "low" })
      yield* repo.insertMany([other])
      // Two at a time: one of each account (turns), busy's being its first high one.
      expect((yield* claim(T0, 2)).map((r) => r.id).sort()).toEqual([high1.id, other.id].sort())
      expect((yield* claim(T0, 1)).map((r) => r.id)).toEqual([high2.id])
      expect((yield* claim(T0, 1)).map((r) => r.id)).toEqual([normal.id])
      expect((yield* claim(T0, 1)).map((r) => [r.id, r.priority])).toEqual([[low.id, "low"]])
    }), timeout)

  it.effect("scheduling: queuePositions counts each queued proof's place in its account's claim order; others are absent", () =>
    Effect.gen(function*() {
      yield* isolate
      const repo = yield* ProofsRepo
      const account = yield* freshAccount
      const stranger = yield* freshAccount
      const a = yield* proofRecord(account, { priority: "low" })
      const b = yield* proofRecord(account)
      const c = yield* proofRecord(account, { priority: "high" })
      const d = yield* proofRecord(account)
      const done = yield* proofRecord(account, { status: "completed", priority: "high" })
      yield* repo.insertMany([a, b, c, d, done])
      // Another account's queue counts nothing here.
      yield* repo.insertMany([yield* proofRecord(stranger, { priority: "high" })])
      const positions = yield* repo.queuePositions(account, [a.id, b.id, c.id, d.id, done.id])
      expect([positions.get(c.id), positions.get(b.id), positions.get(d.id), positions.get(a.id)]).toEqual([1, 2, 3, 4])
      expect(positions.has(done.id)).toBe(false)
      // One proof asked alone (what a create or a get asks) is counted as in a list.
      for (const proof of [a, b, c, d]) {
        expect((yield* repo.queuePositions(account, [proof.id])).get(proof.id)).toBe(positions.get(proof.id))
      }
      expect((yield* repo.queuePositions(account, [done.id])).size).toBe(0)
      expect((yield* repo.queuePositions(stranger, [a.id])).size).toBe(0)
      expect((yield* repo.queuePositions(account, [])).size).toBe(0)
    }), timeout)

  it.effect("scheduling: failOverdue fails queued proofs past their deadline only, as given, and once", () =>
    Effect.gen(function*() {
      yield* isolate
      const repo = yield* ProofsRepo
      const account = yield* freshAccount
      const due = yield* proofRecord(account, { deadline_at: T30 })
      const later = yield* proofRecord(account, { deadline_at: T90 })
      const none = yield* proofRecord(account)
      const running = yield* proofRecord(account, { status: "running", attempts: 1, lease_expires_at: T90, deadline_at: T30 })
      yield* repo.insertMany([due, later, none, running])
      const error = { code: "timeout" as const, message: "late" }
      const failure = { error, duration_ms: 0, proving_ms: null, finished_at: T60, expires_at: T90 }
      const failed = yield* repo.failOverdue(T60, 100, failure)
      expect(failed.map((r) => r.id)).toEqual([due.id])
      // Finished, never started, not completed.
      expect(failed[0]).toMatchObject({
        status: "failed", error, duration_ms: 0, proving_ms: null, started_at: null, completed_at: null, finished_at: T60, expires_at: T90, inputs: null
      })
      expect(Option.getOrThrow(yield* repo.get(account, due.id)).status).toBe("failed")
      expect(yield* repo.failOverdue(T60, 100, failure)).toEqual([])
      for (const row of [later, none, running]) {
        expect(Option.getOrThrow(yield* repo.get(account, row.id)).status).toBe(row.status)
      }
    }), timeout)

  it.effect("scheduling: complete and fail keep proving_ms; a row read back has priority and deadline_at as inserted", () =>
    Effect.gen(function*() {
      yield* isolate
      const repo = yield* ProofsRepo
      const account = yield* freshAccount
      const row = yield* proofRecord(account, { priority: "high", deadline_at: T90 })
      yield* repo.insertMany([row])
      expect(Option.getOrThrow(yield* repo.get(account, row.id))).toMatchObject({ priority: "high", deadline_at: T90, proving_ms: null })
      const [claimed] = yield* claim(T0, 1)
      const completed = yield* repo.complete(claimed!.id, claimed!.attempts, {
        proof_blob: "e30=", public_inputs: {}, duration_ms: 900, proving_ms: 700, completed_at: T30, expires_at: T60
      })
      expect(Option.getOrThrow(completed)).toMatchObject({ duration_ms: 900, proving_ms: 700 })
    }), timeout)

  it.effect("scheduling: usage counts today's proofs by status and sums settled proofs' duration per circuit, today and this month", () =>
    Effect.gen(function*() {
      const repo = yield* ProofsRepo
      const account = yield* freshAccount
      const stranger = yield* freshAccount
      const settled = (circuit: string, status: "completed" | "failed", created: string, done: string, duration: number) =>
        proofRecord(account, {
          circuit, type: circuit, status, created_at: at(created), completed_at: status === "completed" ? at(done) : null, finished_at: at(done),
          duration_ms: duration, proving_ms: duration
        })
      yield* repo.insertMany([
        yield* settled("range", "completed", "2030-01-15T01:00:00.000Z", "2030-01-15T01:00:01.500Z", 1500),
        yield* settled("range", "failed", "2030-01-10T00:00:00.000Z", "2030-01-10T00:00:00.500Z", 500),
        yield* settled("multiplier", "completed", "2030-01-15T02:00:00.000Z", "2030-01-15T02:00:00.250Z", 250),
        // Settled last month: counted nowhere.
        yield* settled("range", "completed", "2029-12-31T23:00:00.000Z", "2029-12-31T23:59:59.999Z", 9000),
        yield* proofRecord(account, { created_at: at("2030-01-15T03:00:00.000Z") }),
        // Canceled: finished, but not settled by a worker; counted by status only.
        yield* proofRecord(account, {
          status: "canceled", created_at: at("2030-01-15T04:00:00.000Z"), canceled_at: at("2030-01-15T04:00:01.000Z"), finished_at: at("2030-01-15T04:00:01.000Z")
        })
      ])
      yield* repo.insertMany([
        yield* proofRecord(stranger, {
          status: "completed", created_at: at("2030-01-15T01:00:00.000Z"), completed_at: at("2030-01-15T01:00:01.000Z"), finished_at: at("2030-01-15T01:00:01.000Z"), duration_ms: 77
        })
      ])
      const usage = yield* repo.usage(account, { dayStart: at("2030-01-15T00:00:00.000Z"), monthStart: at("2030-01-01T00:00:00.000Z") })
      expect(usage.createdTodayByStatus).toEqual({ completed: 2, queued: 1, canceled: 1 })
      expect(usage.circuits).toEqual([
        { circuit: "multiplier", proofs_today: 1, proving_ms_today: 250, proofs_month: 1, proving_ms_month: 250 },
        { circuit: "range", proofs_today: 1, proving_ms_today: 1500, proofs_month: 2, proving_ms_month: 2000 }
      ])
      const empty = yield* repo.usage(yield* freshAccount, { dayStart: at("2030-01-15T00:00:00.000Z"), monthStart: at("2030-01-01T00:00:00.000Z") })
      expect(empty).toEqual({ createdTodayByStatus: {}, circuits: [] })
    }), timeout)

  it.effect("scheduling: RateLimitsRepo.peek reads a window's count without charging; an older or missing window is 0", () =>
    Effect.gen(function*() {
      const repo = yield* RateLimitsRepo
      const account = yield* freshAccount
      const bucket = (window_start: number) => ({ bucket: `peek:${account}`, window_start, limit: 10, cost: 3 })
      expect(yield* repo.peek([bucket(60_000)])).toEqual([0])
      yield* repo.consume([bucket(60_000)])
      expect(yield* repo.peek([bucket(60_000), { ...bucket(60_000), bucket: `peek:none:${account}` }])).toEqual([3, 0])
      expect(yield* repo.peek([bucket(60_000)])).toEqual([3])
      expect(yield* repo.peek([bucket(120_000)])).toEqual([0])
    }), timeout)
}
