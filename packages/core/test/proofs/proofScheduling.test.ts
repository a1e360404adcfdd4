import { describe, expect, it } from "@effect/vitest"
import {
  Accounts,
  type AccountId,
  DEFAULT_LIMITS,
  DEFAULT_PROOFS_CONFIG,
  EventsRepo,
  Limits,
  ProofLoops,
  Proofs,
  ProofsConfig,
  type ProofsConfigShape
} from "@mzk/core"
import { FakeProver, FakeProverCalls, type FakeProverOptions, SqliteMemoryStore, testCore } from "@mzk/testkit"
import { Effect, Either, Layer, TestClock } from "effect"

/**
 * Scheduling a user can steer, on TestClock: a request's priority within its
 * account, its deadline (`timeout_ms`) while queued and while running, and the record's times and
 * queue position as the proof moves.
 */

/** Lets forked fibers (the worker, the sweeps, running proofs) catch up without moving the clock. */
const settle = Effect.repeatN(Effect.yieldNow(), 50)
const advance = (duration: Parameters<typeof TestClock.adjust>[0]) => Effect.zipRight(TestClock.adjust(duration), settle)

/** The core with the proof loops running, on TestClock: `b` = 7 takes 50 seconds to prove, 8 two minutes (past the timeout), others 3 seconds. */
const withLoops = (runningPerAccount: number, config: Partial<ProofsConfigShape> = {}, prover: FakeProverOptions = {}) => {
  const fake = FakeProver({ capacity: 8, duration: ({ inputs }) => (inputs.b === "7" ? "50 seconds" : inputs.b === "8" ? "2 minutes" : "3 seconds"), ...prover })
  return ProofLoops.pipe(
    Layer.provideMerge(testCore(SqliteMemoryStore, { prover: fake })),
    Layer.provideMerge(fake),
    Layer.provide(Layer.succeed(ProofsConfig, { ...DEFAULT_PROOFS_CONFIG, ...config })),
    Layer.provide(Layer.succeed(Limits, { ...DEFAULT_LIMITS, maxRunningProofsPerAccount: runningPerAccount }))
  )
}

const newAccount = Effect.map(Effect.flatMap(Accounts, (a) => a.create({ name: "Acme" })), (a) => a.id as AccountId)
const multiplier = (b: number, extra: Record<string, unknown> = {}) => ({ type: "multiplier", inputs: { a: "3", b: String(b) }, ...extra })
const LONG = multiplier(7)

const eventsOf = (accountId: AccountId, type: string) =>
  Effect.map(Effect.flatMap(EventsRepo, (repo) => repo.list(accountId, { limit: 100 })), (page) => page.items.filter((e) => e.type === type))

/** The `b` inputs of the proofs the prover started, in order. */
const provenOrder = Effect.map(Effect.flatten(FakeProverCalls), (calls) => calls.map((c) => (c.inputs as Record<string, string>).b))

describe("priority within an account", () => {
  it.effect("an account's queued proofs run high, then normal, then low, each oldest first; queue_position says so", () =>
    Effect.gen(function*() {
      const account = yield* newAccount
      const proofs = yield* Proofs
      yield* proofs.create(account, LONG)
      yield* settle
      // One runs at a time for this account: the rest wait, in the order they will be claimed.
      const low = yield* proofs.create(account, multiplier(11, { priority: "low" }))
      const normal = yield* proofs.create(account, multiplier(12))
      const high1 = yield* proofs.create(account, multiplier(13, { priority: "high" }))
      const high2 = yield* proofs.create(account, multiplier(14, { priority: "high" }))
      expect([low.priority, normal.priority, high1.priority]).toEqual(["low", "normal", "high"])
      // Each answer's position is its place when it was queued; read again, the later highs went ahead.
      expect([low.queue_position, normal.queue_position, high1.queue_position, high2.queue_position]).toEqual([1, 1, 1, 2])
      const now = yield* Effect.all([low, normal, high1, high2].map((p) => proofs.get(account, p.proof_id)))
      expect(now.map((p) => p.queue_position)).toEqual([4, 3, 1, 2])
      const listed = yield* proofs.list(account, { status: "queued" })
      expect(listed.proofs.map((p) => [p.proof_id, p.queue_position])).toEqual(
        [[high2.proof_id, 2], [high1.proof_id, 1], [normal.proof_id, 3], [low.proof_id, 4]]
      )

      yield* advance("50 seconds")
      for (let i = 0; i < 4; i++) yield* advance("3 seconds")
      expect(yield* provenOrder).toEqual(["7", "13", "14", "12", "11"])
    }).pipe(Effect.provide(withLoops(1))))

  it.effect("priority never jumps another account's queue: accounts still take turns", () =>
    Effect.gen(function*() {
      const busy = yield* newAccount
      const quiet = yield* newAccount
      const proofs = yield* Proofs
      // Queued before the worker's first claim (the loops are built, the clock has not moved).
      for (const b of [21, 22, 23]) yield* proofs.create(busy, multiplier(b, { priority: "high" }))
      yield* proofs.create(quiet, multiplier(31, { priority: "low" }))
      yield* settle
      // Two slots: one each, in turns, although busy's are all high and quiet's is low.
      const started = yield* provenOrder
      expect(started.slice(0, 2).sort()).toEqual(["21", "31"])
    }).pipe(Effect.provide(withLoops(10, { workerConcurrency: 2 }))))
})

describe("the deadline (timeout_ms)", () => {
  it.effect("a proof still queued at its deadline fails with timeout, was never started, and proof.failed says so", () =>
    Effect.gen(function*() {
      const account = yield* newAccount
      const proofs = yield* Proofs
      yield* proofs.create(account, LONG)
      yield* settle
      const waiting = yield* proofs.create(account, multiplier(11, { timeout_ms: 5_000 }))
      expect(waiting.deadline_at).toBe("1970-01-01T00:00:05.000Z")
      expect(waiting.queue_position).toBe(1)
      yield* advance("4 seconds")
      expect((yield* proofs.get(account, waiting.proof_id)).status).toBe("queued")
      yield* advance("1 second")
      const failed = yield* proofs.get(account, waiting.proof_id)
      expect(failed).toMatchObject({
        status: "failed",
        error: { code: "timeout" },
        started_at: null,
        duration_ms: 0,
        proving_ms: null,
        queue_position: null,
        finished_at: "1970-01-01T00:00:05.000Z",
        // It failed: finished, never completed.
        completed_at: null
      })
      expect(failed.error?.message).toMatch(/deadline \(timeout_ms\) passed while the proof was queued/)
      const [event] = yield* eventsOf(account, "proof.failed")
      expect(event?.data).toMatchObject({ proof_id: waiting.proof_id, status: "failed", error: { code: "timeout" }, duration_ms: 0 })
      // The prover never saw it: only the long proof ran.
      expect(yield* provenOrder).toEqual(["7"])
    }).pipe(Effect.provide(withLoops(1))))

  it.effect("a running proof is stopped at its deadline, before the server's timeout; proving_ms ≤ duration_ms", () =>
    Effect.gen(function*() {
      const account = yield* newAccount
      const proofs = yield* Proofs
      const proof = yield* proofs.create(account, multiplier(7, { timeout_ms: 2_000 }))
      yield* settle
      expect((yield* proofs.get(account, proof.proof_id)).status).toBe("running")
      yield* advance("1999 millis")
      expect((yield* proofs.get(account, proof.proof_id)).status).toBe("running")
      yield* advance("1 millis")
      const failed = yield* proofs.get(account, proof.proof_id)
      expect(failed).toMatchObject({ status: "failed", error: { code: "timeout" }, duration_ms: 2_000, proving_ms: 2_000 })
      expect(failed.error?.message).toMatch(/request's deadline/)
    }).pipe(Effect.provide(withLoops(1))))

  it.effect("without a deadline the server's proof timeout still stops it", () =>
    Effect.gen(function*() {
      const account = yield* newAccount
      const proofs = yield* Proofs
      const proof = yield* proofs.create(account, multiplier(8))
      yield* settle
      yield* advance("60 seconds")
      const failed = yield* proofs.get(account, proof.proof_id)
      expect(failed).toMatchObject({ status: "failed", error: { code: "timeout", message: "Proof generation exceeded 60 s" }, deadline_at: null })
    }).pipe(Effect.provide(withLoops(1))))

  it.effect("refused, not clamped: timeout_ms over the server's proof timeout is invalid_request naming the field (batch: its item)", () =>
    Effect.gen(function*() {
      const account = yield* newAccount
      const proofs = yield* Proofs
      const one = yield* Effect.either(proofs.create(account, multiplier(11, { timeout_ms: 60_001 })))
      expect(Either.isLeft(one) && one.left).toMatchObject({
        _tag: "InvalidRequest",
        details: [{ path: "timeout_ms", message: "must be at most 60000 (this server's proof timeout), got 60001" }]
      })
      const batch = yield* Effect.either(proofs.createBatch(account, { proofs: [multiplier(11), multiplier(12, { timeout_ms: 90_000 })] }))
      expect(Either.isLeft(batch) && batch.left).toMatchObject({ _tag: "InvalidRequest", details: [{ path: "proofs.1.timeout_ms" }] })
      // At the cap is accepted.
      expect((yield* proofs.create(account, multiplier(11, { timeout_ms: 60_000 }))).deadline_at).toBe("1970-01-01T00:01:00.000Z")
    }).pipe(Effect.provide(withLoops(1))))
})

describe("the record's times", () => {
  it.effect("queued → running → completed: queued_at, started_at, finished_at, queue_position and proving_ms move with it", () =>
    Effect.gen(function*() {
      const account = yield* newAccount
      const proofs = yield* Proofs
      yield* advance("1 second")
      yield* proofs.create(account, LONG)
      yield* settle
      const queued = yield* proofs.create(account, multiplier(11))
      expect(queued).toMatchObject({
        status: "queued",
        queued_at: "1970-01-01T00:00:01.000Z",
        created_at: "1970-01-01T00:00:01.000Z",
        started_at: null,
        finished_at: null,
        queue_position: 1,
        duration_ms: null,
        proving_ms: null
      })
      yield* advance("50 seconds")
      const running = yield* proofs.get(account, queued.proof_id)
      expect(running).toMatchObject({ status: "running", started_at: "1970-01-01T00:00:51.000Z", finished_at: null, queue_position: null })
      yield* advance("3 seconds")
      const done = yield* proofs.get(account, queued.proof_id)
      expect(done).toMatchObject({
        status: "completed",
        queued_at: "1970-01-01T00:00:01.000Z",
        started_at: "1970-01-01T00:00:51.000Z",
        finished_at: "1970-01-01T00:00:54.000Z",
        completed_at: "1970-01-01T00:00:54.000Z",
        queue_position: null,
        duration_ms: 3_000,
        proving_ms: 3_000
      })
      expect(done.proving_ms!).toBeLessThanOrEqual(done.duration_ms!)
    }).pipe(Effect.provide(withLoops(1))))
})
