import { describe, expect, it } from "@effect/vitest"
import {
  Accounts,
  actingFor,
  type AccountId,
  ApiKeys,
  DEFAULT_LIMITS,
  DEFAULT_PROOFS_CONFIG,
  EventsRepo,
  type Principal,
  Prover,
  ProofLoops,
  Proofs,
  ProofsConfig,
  type ProofsConfigShape,
  ProofsRepo,
  ProofWorker,
  RateLimits,
  SCOPES,
  type Storage
} from "@mzk/core"
import { FakeProver, type FakeProverOptions, makeSqliteMemoryStore, SqliteMemoryStore, testCore } from "@mzk/testkit"
import { Context, Effect, Layer, Option, Ref, TestClock } from "effect"

/** Storage lists newest first; this file reads events in the order they happened. */
const oldestFirst = <A>(items: ReadonlyArray<A>): Array<A> => [...items].reverse()

/** Lets forked fibers (the worker, its watch, running proofs) catch up without moving the clock. */
const settle = Effect.repeatN(Effect.yieldNow(), 50)
const advance = (duration: Parameters<typeof TestClock.adjust>[0]) => Effect.zipRight(TestClock.adjust(duration), settle)

/** What the prover saw: proofs it started, and those whose proving was interrupted. */
class ProverLog extends Context.Tag("test/ProverLog")<ProverLog, Ref.Ref<{ readonly started: number; readonly interrupted: number }>>() {}

/** The fake prover (each proof takes `duration` on the TestClock), logging starts and interruptions. */
const loggedProver = (options: FakeProverOptions) =>
  Layer.effectContext(Effect.gen(function*() {
    const inner = yield* Prover
    const log = yield* Ref.make({ started: 0, interrupted: 0 })
    const prove: typeof inner.prove = (circuit, inputs) =>
      Effect.zipRight(
        Ref.update(log, (l) => ({ ...l, started: l.started + 1 })),
        inner.prove(circuit, inputs).pipe(Effect.onInterrupt(() => Ref.update(log, (l) => ({ ...l, interrupted: l.interrupted + 1 }))))
      )
    return Context.make(Prover, { ...inner, prove }).pipe(Context.add(ProverLog, log))
  })).pipe(Layer.provide(FakeProver(options)))

/** How often the worker asked storage whether it still holds its claims. */
class ClaimChecks extends Context.Tag("test/ClaimChecks")<ClaimChecks, Ref.Ref<number>>() {}

/** The in-memory store, counting `lostClaims` calls. */
const countingStore = Layer.effectContext(Effect.gen(function*() {
  const store = yield* makeSqliteMemoryStore
  const checks = yield* Ref.make(0)
  const repo = Context.get(store, ProofsRepo)
  return Context.add(store, ProofsRepo, { ...repo, lostClaims: (claims) => Effect.zipRight(Ref.update(checks, (n) => n + 1), repo.lostClaims(claims)) })
    .pipe(Context.add(ClaimChecks, checks))
}))

/** The core with the proof loops running over `store`, on TestClock. */
const withLoops = <S>(
  prover: FakeProverOptions = {},
  config: Partial<ProofsConfigShape> = {},
  store: Layer.Layer<Storage | S> = SqliteMemoryStore as Layer.Layer<Storage | S>
) => {
  // One layer value, so both uses share one prover (layers are memoised by reference in a build).
  const logged = loggedProver(prover)
  return ProofLoops.pipe(
    Layer.provideMerge(testCore(store, { prover: logged })),
    Layer.provideMerge(logged),
    Layer.provideMerge(store),
    Layer.provide(Layer.succeed(ProofsConfig, { ...DEFAULT_PROOFS_CONFIG, ...config }))
  )
}

const principalOf = (account_id: AccountId): Principal => ({ account_id, scopes: SCOPES, via: { kind: "session" } })
const newAccount = Effect.map(Effect.flatMap(Accounts, (a) => a.create({ name: "Acme" })), (a) => principalOf(a.id))

const eventsOf = (accountId: AccountId, type: string) =>
  Effect.map(Effect.flatMap(EventsRepo, (repo) => repo.list(accountId, { limit: 100 })), (page) => oldestFirst(page.items).filter((e) => e.type === type))

// As the principal's request: a key's minute is charged to the key the request context names.
const windowsOf = (principal: Principal) =>
  Effect.flatMap(RateLimits, (r) => r.admitProofRequest(principal.account_id, { proofs: 0 })).pipe(actingFor(principal))
const remaining = (principal: Principal, policy: "key" | "daily") =>
  Effect.map(windowsOf(principal), (windows) => windows.find((w) => w.policy === policy)?.remaining)

const multiplier = (b: number) => ({ type: "multiplier", inputs: { a: "3", b: String(b) } })

describe("Proof cancellation on TestClock", () => {
  it.effect("a queued proof is canceled at once: its record, its event, its inputs dropped, its daily unit refunded (not the key's minute)", () =>
    Effect.gen(function*() {
      const account = yield* newAccount
      const keys = yield* ApiKeys
      const principal = yield* keys.authenticate((yield* keys.create(account.account_id, { name: "ci" })).secret)
      const proofs = yield* Proofs
      yield* TestClock.adjust("5 seconds")
      const queued = yield* proofs.create(principal.account_id, multiplier(11)).pipe(actingFor(principal))
      expect(yield* remaining(principal, "daily")).toBe(DEFAULT_LIMITS.proofsPerDayPerAccount - 1)
      const keyLeft = yield* remaining(principal, "key")

      yield* TestClock.adjust("2 seconds")
      const canceled = yield* proofs.cancel(account.account_id, queued.proof_id)
      expect(canceled).toEqual({
        ...queued,
        status: "canceled",
        canceled_at: "1970-01-01T00:00:07.000Z",
        finished_at: "1970-01-01T00:00:07.000Z",
        queue_position: null,
        expires_at: "1970-01-31T00:00:07.000Z"
      })
      expect(yield* proofs.get(account.account_id, queued.proof_id)).toEqual(canceled)
      const stored = Option.getOrThrow(yield* (yield* ProofsRepo).get(account.account_id, queued.proof_id))
      expect([stored.inputs, stored.lease_expires_at]).toEqual([null, null])
      const [event] = yield* eventsOf(account.account_id, "proof.canceled")
      expect(event?.data).toEqual({
        proof_id: queued.proof_id,
        circuit: "multiplier",
        circuit_version: 1,
        status: "canceled",
        canceled_at: "1970-01-01T00:00:07.000Z",
        created_at: queued.created_at,
        metadata: {}
      })
      expect(yield* remaining(principal, "daily")).toBe(DEFAULT_LIMITS.proofsPerDayPerAccount)
      // Each look at the windows is itself a request of the key's minute: the look before this one.
      expect(yield* remaining(principal, "key")).toBe(keyLeft! - 2)
    }).pipe(Effect.provide(testCore())))

  it.effect("settled proofs are not cancelable (409 naming the status); other accounts' and unknown ids are not found", () =>
    Effect.gen(function*() {
      const principal = yield* newAccount
      const other = yield* newAccount
      const proofs = yield* Proofs
      const completed = (yield* proofs.create(principal.account_id, multiplier(11)))
      const failed = (yield* proofs.create(principal.account_id, { type: "multiplier", inputs: { a: "1", b: "7" } }))
      yield* settle
      yield* advance("100 millis")
      const canceled = (yield* proofs.create(principal.account_id, multiplier(12)))
      yield* proofs.cancel(principal.account_id, canceled.proof_id)
      for (const [proof, status] of [[completed, "completed"], [failed, "failed"], [canceled, "canceled"]] as const) {
        const error = yield* Effect.flip(proofs.cancel(principal.account_id, proof.proof_id))
        expect(error).toMatchObject({
          _tag: "ProofNotCancelable",
          message: `Proof ${proof.proof_id} is ${status}; only queued or running proofs can be canceled`
        })
      }
      for (const [account, id] of [[other.account_id, completed.proof_id], [principal.account_id, "proof_nope"], [principal.account_id, "batch_x"]] as const) {
        expect((yield* Effect.flip(proofs.cancel(account, id)))._tag).toBe("ProofNotFound")
      }
      // Refused cancels refund nothing: the completed and failed proofs stay charged.
      expect(yield* remaining(principal, "daily")).toBe(DEFAULT_LIMITS.proofsPerDayPerAccount - 2)
      expect((yield* eventsOf(principal.account_id, "proof.canceled")).length).toBe(1)
    }).pipe(Effect.provide(withLoops())))

  it.effect("a running proof is stopped: the prove is interrupted, nothing settles it, and the worker's slot serves the next proof at once", () =>
    Effect.gen(function*() {
      const principal = yield* newAccount
      const proofs = yield* Proofs
      const log = yield* ProverLog
      const worker = yield* ProofWorker
      const long = (yield* proofs.create(principal.account_id, multiplier(11)))
      const next = (yield* proofs.create(principal.account_id, multiplier(12)))
      yield* settle
      yield* advance("3 seconds")
      expect((yield* proofs.get(principal.account_id, long.proof_id)).status).toBe("running")
      expect((yield* proofs.get(principal.account_id, next.proof_id)).status).toBe("queued")

      const canceled = yield* proofs.cancel(principal.account_id, long.proof_id)
      expect(canceled).toMatchObject({ status: "canceled", started_at: "1970-01-01T00:00:00.000Z", completed_at: null, duration_ms: null })
      // Without moving the clock: the cancel's nudge stopped the proving, and the freed slot took the next proof.
      yield* settle
      expect(yield* Ref.get(log)).toEqual({ started: 2, interrupted: 1 })
      expect(yield* worker.inFlight).toBe(1)
      expect((yield* proofs.get(principal.account_id, next.proof_id)).status).toBe("running")

      yield* advance("10 seconds")
      expect((yield* proofs.get(principal.account_id, next.proof_id)).status).toBe("completed")
      expect(yield* proofs.get(principal.account_id, long.proof_id)).toEqual(canceled)
      expect((yield* eventsOf(principal.account_id, "proof.completed")).map((e) => e.data.proof_id)).toEqual([next.proof_id])
      expect((yield* eventsOf(principal.account_id, "proof.canceled")).map((e) => e.data.proof_id)).toEqual([long.proof_id])
    }).pipe(Effect.provide(withLoops({ duration: "10 seconds" }, { workerConcurrency: 1 }))))

  it.effect("canceled in another process (no nudge): the worker stops the proof at its next claim check", () =>
    Effect.gen(function*() {
      // Two cores over one store stand for an API process and a worker process.
      const store = Layer.succeedContext(yield* makeSqliteMemoryStore)
      const workerCore = yield* Layer.build(withLoops({ duration: "1 minute" }, { claimCheckIntervalMs: 2_000 }, store))
      const apiCore = yield* Layer.build(testCore(store, { seed: "api" }))
      const principal = yield* newAccount.pipe(Effect.provide(apiCore))
      const value = yield* Effect.flatMap(Proofs, (p) => p.create(principal.account_id, multiplier(11))).pipe(Effect.provide(apiCore))
      // Nor is the worker nudged by the insert: it claims at its next poll, at 1 s.
      yield* settle
      yield* advance("1 second")
      const log = Context.get(workerCore, ProverLog)
      expect(yield* Ref.get(log)).toEqual({ started: 1, interrupted: 0 })

      yield* Effect.flatMap(Proofs, (p) => p.cancel(principal.account_id, value.proof_id)).pipe(Effect.provide(apiCore))
      yield* advance("1 second")
      expect(yield* Ref.get(log)).toEqual({ started: 1, interrupted: 0 })
      // Its first check, 2 s after the claim, finds the claim gone.
      yield* advance("1 second")
      expect(yield* Ref.get(log)).toEqual({ started: 1, interrupted: 1 })
      expect(yield* Context.get(workerCore, ProofWorker).inFlight).toBe(0)
      yield* advance("2 minutes")
      const proof = yield* Effect.flatMap(Proofs, (p) => p.get(principal.account_id, value.proof_id)).pipe(Effect.provide(apiCore))
      expect(proof).toMatchObject({ status: "canceled", proof_blob: null, completed_at: null })
    }).pipe(Effect.scoped))

  it.effect("the claim check reads storage only while proofs run: once per interval, none while idle", () =>
    Effect.gen(function*() {
      const principal = yield* newAccount
      const proofs = yield* Proofs
      const checks = yield* ClaimChecks
      yield* advance("1 hour")
      expect(yield* Ref.get(checks)).toBe(0)
      yield* proofs.create(principal.account_id, multiplier(11))
      yield* settle
      // A 10.5 s proof, checked every second while it runs.
      for (let i = 0; i < 11; i++) yield* advance("1 second")
      expect(yield* Ref.get(checks)).toBe(10)
      yield* advance("1 hour")
      expect(yield* Ref.get(checks)).toBe(10)
      // The claim loop's idle polls are moved out of the way: each TestClock wake-up costs real time.
    }).pipe(Effect.provide(withLoops({ duration: "10500 millis" }, { pollIntervalMs: 86_400_000, sweepIntervalMs: 86_400_000 }, countingStore))))

  it.effect("a batch cancel takes its queued and running proofs in one go; a settled batch answers canceled_count 0; unknown batches are not found", () =>
    Effect.gen(function*() {
      const principal = yield* newAccount
      const other = yield* newAccount
      const proofs = yield* Proofs
      const log = yield* ProverLog
      const batch = yield* proofs.createBatch(principal.account_id, { proofs: [multiplier(2), { type: "multiplier", inputs: { a: "1", b: "5" } }, multiplier(4), multiplier(5)] })
      const ids = batch.proofs.map((p) => p.proof_id)
      // Two run at once: the first completes, the second fails (a constraint), then two more run.
      yield* settle
      yield* advance("1 second")
      const before = yield* proofs.list(principal.account_id, { limit: 10 })
      expect(before.proofs.map((p) => p.status)).toEqual(["running", "running", "failed", "completed"])
      expect(yield* remaining(principal, "daily")).toBe(DEFAULT_LIMITS.proofsPerDayPerAccount - 4)

      for (const [account, id] of [[other.account_id, batch.batch_id], [principal.account_id, "batch_00000000000000000000000000"], [principal.account_id, ids[0]!]] as const) {
        expect(yield* Effect.flip(proofs.cancelBatch(account, id))).toMatchObject({ _tag: "BatchNotFound" })
      }
      const result = yield* proofs.cancelBatch(principal.account_id, batch.batch_id)
      expect(result.batch_id).toBe(batch.batch_id)
      expect(result.canceled_count).toBe(2)
      expect(result.proofs.map((p) => [p.proof_id, p.status])).toEqual([
        [ids[0], "completed"],
        [ids[1], "failed"],
        [ids[2], "canceled"],
        [ids[3], "canceled"]
      ])
      yield* settle
      expect(yield* Ref.get(log)).toMatchObject({ started: 4, interrupted: 2 })
      expect((yield* eventsOf(principal.account_id, "proof.canceled")).map((e) => e.data.proof_id).sort()).toEqual([ids[2], ids[3]].sort())
      expect(yield* remaining(principal, "daily")).toBe(DEFAULT_LIMITS.proofsPerDayPerAccount - 2)

      const again = yield* proofs.cancelBatch(principal.account_id, batch.batch_id)
      expect(again).toEqual({ ...result, canceled_count: 0 })
      expect(yield* remaining(principal, "daily")).toBe(DEFAULT_LIMITS.proofsPerDayPerAccount - 2)
    }).pipe(Effect.provide(withLoops({ duration: "1 second" }, { workerConcurrency: 2 }))))

  it.effect("a refund goes to the UTC day the proof was charged in: none once that day is over", () =>
    Effect.gen(function*() {
      const principal = yield* newAccount
      const proofs = yield* Proofs
      yield* TestClock.adjust("23 hours")
      const yesterday = (yield* proofs.create(principal.account_id, multiplier(11)))
      yield* TestClock.adjust("2 hours")
      const today = (yield* proofs.create(principal.account_id, multiplier(12)))
      expect(yield* remaining(principal, "daily")).toBe(DEFAULT_LIMITS.proofsPerDayPerAccount - 1)
      yield* proofs.cancel(principal.account_id, yesterday.proof_id)
      expect(yield* remaining(principal, "daily")).toBe(DEFAULT_LIMITS.proofsPerDayPerAccount - 1)
      yield* proofs.cancel(principal.account_id, today.proof_id)
      expect(yield* remaining(principal, "daily")).toBe(DEFAULT_LIMITS.proofsPerDayPerAccount)
    }).pipe(Effect.provide(testCore())))

  it.effect("a canceled proof expires with retention (30 days after the cancel) and fires proof.expired", () =>
    Effect.gen(function*() {
      const principal = yield* newAccount
      const proofs = yield* Proofs
      const value = yield* proofs.create(principal.account_id, multiplier(11))
      const canceled = yield* proofs.cancel(principal.account_id, value.proof_id)
      expect(canceled.expires_at).toBe("1970-01-31T00:00:00.000Z")
      yield* advance("29 days")
      expect((yield* proofs.get(principal.account_id, value.proof_id)).status).toBe("canceled")
      yield* advance("1 day")
      expect(yield* proofs.get(principal.account_id, value.proof_id)).toMatchObject({ status: "expired", canceled_at: canceled.canceled_at })
      const [event] = yield* eventsOf(principal.account_id, "proof.expired")
      expect(event?.data).toMatchObject({ proof_id: value.proof_id, status: "expired" })
    }).pipe(Effect.provide(withLoops({}, { pollIntervalMs: 86_400_000, sweepIntervalMs: 86_400_000 }))))
})
