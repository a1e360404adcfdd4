import { describe, expect, it } from "@effect/vitest"
import {
  Accounts,
  type AccountId,
  DEFAULT_LIMITS,
  DEFAULT_PROOFS_CONFIG,
  EventsRepo,
  Limits,
  type Proof,
  ProofLoops,
  Proofs,
  ProofsConfig,
  type ProofsConfigShape,
  ProofsRepo,
  Prover,
  settledTimes,
  type Storage,
  type Timestamp
} from "@mzk/core"
import { FakeProver, type FakeProverOptions, makeSqliteMemoryStore, testCore } from "@mzk/testkit"
import { Context, type Duration, Effect, Layer, TestClock } from "effect"

/**
 * The proof record's timeline on TestClock: one set of timestamps, each set only when its event
 * happened (`started_at` when a worker started the proof, `completed_at` only for a completed one,
 * `finished_at` when it settled however it did), `duration_ms` exactly `finished_at − started_at`,
 * and `proving_ms` the prover's own time, never the start of its pool.
 */

/** Lets forked fibers (the worker, the sweeps, running proofs) catch up without moving the clock. */
const settle = Effect.repeatN(Effect.yieldNow(), 50)
const advance = (duration: Parameters<typeof TestClock.adjust>[0]) => Effect.zipRight(TestClock.adjust(duration), settle)

/** `b` = 7 takes 50 seconds to prove, others 3 seconds; a factor of 1 violates multiplier's constraint. */
const fake = (options: FakeProverOptions = {}) =>
  FakeProver({ capacity: 8, duration: ({ inputs }) => (inputs.b === "7" ? "50 seconds" : "3 seconds"), ...options })

/** The core with the proof loops running on `store`, one running proof per account. */
const withLoops = (options: {
  readonly store?: Effect.Effect<Context.Context<Storage>>
  readonly prover?: Layer.Layer<Prover>
  readonly config?: Partial<ProofsConfigShape>
} = {}) =>
  Layer.unwrapEffect(Effect.map(options.store ?? makeSqliteMemoryStore, (store) =>
    ProofLoops.pipe(
      Layer.provideMerge(testCore(Layer.succeedContext(store), { prover: options.prover ?? fake() })),
      Layer.provide(Layer.succeed(ProofsConfig, { ...DEFAULT_PROOFS_CONFIG, ...options.config })),
      Layer.provide(Layer.succeed(Limits, { ...DEFAULT_LIMITS, maxRunningProofsPerAccount: 1 }))
    )))

/** A store whose claims take `ms` on the clock after they were made, as a claim's transaction takes time. */
const slowClaims = (ms: number) =>
  Effect.map(makeSqliteMemoryStore, (store) => {
    const repo = Context.get(store, ProofsRepo)
    return Context.add(store, ProofsRepo, {
      ...repo,
      claimNext: (request) => Effect.tap(repo.claimNext(request), (claimed) => (claimed.length > 0 ? Effect.sleep(ms) : Effect.void))
    })
  })

const newAccount = Effect.map(Effect.flatMap(Accounts, (a) => a.create({ name: "Acme" })), (a) => a.id as AccountId)
const multiplier = (a: number, b: number, extra: Record<string, unknown> = {}) => ({ type: "multiplier", inputs: { a: String(a), b: String(b) }, ...extra })

const eventsOf = (accountId: AccountId, type: string) =>
  Effect.map(Effect.flatMap(EventsRepo, (repo) => repo.list(accountId, { limit: 100 })), (page) => page.items.filter((e) => e.type === type))

const span = (proof: Proof) => Date.parse(proof.finished_at!) - Date.parse(proof.started_at!)

describe("settledTimes", () => {
  it("duration_ms is the difference of the timestamps it writes, to the millisecond; 0 without a start; never negative", () => {
    const start = "2030-01-01T00:00:00.000Z" as Timestamp
    const at = Date.parse(start)
    // A clock reading with a fraction of a millisecond is written, and counted, as the timestamp.
    expect(settledTimes(start, at + 1234.9, 1000)).toEqual({
      finished_at: "2030-01-01T00:00:01.234Z", duration_ms: 1234, expires_at: "2030-01-01T00:00:02.234Z"
    })
    expect(settledTimes(null, at + 5000, 1000)).toEqual({
      finished_at: "2030-01-01T00:00:05.000Z", duration_ms: 0, expires_at: "2030-01-01T00:00:06.000Z"
    })
    // A clock stepped back since the start: settled at the start, not before it.
    expect(settledTimes(start, at - 40, 1000)).toEqual({ finished_at: start, duration_ms: 0, expires_at: "2030-01-01T00:00:01.000Z" })
  })
})

describe("the proof record's timeline", () => {
  it.effect("duration_ms is exactly finished_at − started_at, however long the claim took; completed_at only for a completed proof", () =>
    Effect.gen(function*() {
      const account = yield* newAccount
      const proofs = yield* Proofs
      const ok = yield* proofs.create(account, multiplier(3, 11))
      yield* settle
      // The claim was made at 0 and its transaction took 5 ms before the worker had the proof.
      yield* advance("5 millis")
      yield* advance("3 seconds")
      const done = yield* proofs.get(account, ok.proof_id)
      expect(done).toMatchObject({
        status: "completed",
        started_at: "1970-01-01T00:00:00.000Z",
        finished_at: "1970-01-01T00:00:03.005Z",
        completed_at: "1970-01-01T00:00:03.005Z",
        duration_ms: 3_005
      })
      expect(done.duration_ms).toBe(span(done))

      const bad = yield* proofs.create(account, multiplier(1, 5))
      yield* settle
      yield* advance("5 millis")
      yield* advance("3 seconds")
      const failed = yield* proofs.get(account, bad.proof_id)
      expect(failed).toMatchObject({
        status: "failed",
        error: { code: "constraint_violation" },
        started_at: "1970-01-01T00:00:03.005Z",
        finished_at: "1970-01-01T00:00:06.010Z",
        completed_at: null,
        duration_ms: 3_005
      })
      expect(failed.duration_ms).toBe(span(failed))
      // The events carry the record's duration.
      const [completed] = yield* eventsOf(account, "proof.completed")
      const [failure] = yield* eventsOf(account, "proof.failed")
      expect([completed?.data.duration_ms, failure?.data.duration_ms]).toEqual([3_005, 3_005])
    }).pipe(Effect.provide(withLoops({ store: slowClaims(5) }))))

  it.effect("a proof whose deadline passed before a worker claimed it was never started: no started_at, duration_ms 0, no completed_at", () =>
    Effect.gen(function*() {
      const account = yield* newAccount
      const proofs = yield* Proofs
      const long = yield* proofs.create(account, multiplier(3, 7))
      yield* settle
      const late = yield* proofs.create(account, multiplier(3, 11, { timeout_ms: 5_000 }))
      // Its deadline passes while the account's one slot is taken; the sweep is an hour away, so
      // the worker's claim reaches it first, when the long proof settles at 50 s.
      yield* advance("50 seconds")
      expect((yield* proofs.get(account, long.proof_id)).status).toBe("completed")
      const failed = yield* proofs.get(account, late.proof_id)
      expect(failed).toMatchObject({
        status: "failed",
        error: { code: "timeout" },
        started_at: null,
        finished_at: "1970-01-01T00:00:50.000Z",
        completed_at: null,
        duration_ms: 0,
        proving_ms: null
      })
      expect(failed.error?.message).toMatch(/never started/)
      const [event] = yield* eventsOf(account, "proof.failed")
      expect(event?.data).toMatchObject({ proof_id: late.proof_id, duration_ms: 0 })
    }).pipe(Effect.provide(withLoops({ config: { pollIntervalMs: 3_600_000 } }))))

  it.effect("a prover whose pool starts on first use: no proof is started before it is up, and none counts its start", () =>
    Effect.gen(function*() {
      const account = yield* newAccount
      const proofs = yield* Proofs
      const first = yield* proofs.create(account, multiplier(3, 11))
      yield* settle
      // The pool takes 6 s to start: the proof waits queued meanwhile, not running.
      yield* advance("5 seconds")
      expect(yield* proofs.get(account, first.proof_id)).toMatchObject({ status: "queued", started_at: null })
      yield* advance("1 second")
      yield* advance("3 seconds")
      const done = yield* proofs.get(account, first.proof_id)
      expect(done).toMatchObject({
        status: "completed",
        started_at: "1970-01-01T00:00:06.000Z",
        finished_at: "1970-01-01T00:00:09.000Z",
        duration_ms: 3_000,
        proving_ms: 3_000
      })
      const second = yield* proofs.create(account, multiplier(3, 12))
      yield* settle
      yield* advance("3 seconds")
      expect(yield* proofs.get(account, second.proof_id)).toMatchObject({ status: "completed", duration_ms: 3_000, proving_ms: 3_000 })
    }).pipe(Effect.provide(withLoops({ prover: startedOnFirstUse("6 seconds") }))))

  it.effect("proving_ms is the time the prover reports for its own work on the proof, when it reports one", () =>
    Effect.gen(function*() {
      const account = yield* newAccount
      const proofs = yield* Proofs
      const proof = yield* proofs.create(account, multiplier(3, 11))
      yield* settle
      yield* advance("3 seconds")
      expect(yield* proofs.get(account, proof.proof_id)).toMatchObject({ status: "completed", duration_ms: 3_000, proving_ms: 1_234 })
    }).pipe(Effect.provide(withLoops({ prover: reporting(1_234) }))))
})

/** The fake prover behind a pool started on its first use (as the server's lazy prover), taking `start`. */
const startedOnFirstUse = (start: Duration.DurationInput): Layer.Layer<Prover> =>
  Layer.effect(Prover, Effect.gen(function*() {
    const pool = yield* Prover
    const started = yield* Effect.cached(Effect.sleep(start))
    return {
      ...pool,
      ready: started,
      prove: (circuit, inputs) => Effect.zipRight(started, pool.prove(circuit, inputs)),
      verify: (circuit, proof, signals) => Effect.zipRight(started, pool.verify(circuit, proof, signals))
    } satisfies Prover["Type"]
  })).pipe(Layer.provide(fake()))

/** The fake prover, reporting `ms` as its own time on each proof. */
const reporting = (ms: number): Layer.Layer<Prover> =>
  Layer.effect(Prover, Effect.map(Prover, (pool) => ({
    ...pool,
    prove: (circuit, inputs) => Effect.map(pool.prove(circuit, inputs), (out) => ({ ...out, proving_ms: ms }))
  }) satisfies Prover["Type"])).pipe(Layer.provide(fake()))
