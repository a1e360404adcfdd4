import { describe, expect, it } from "@effect/vitest"
import {
  Accounts,
  type AccountId,
  CreateProofBatchInput,
  CreateProofInput,
  decodeInput,
  DEFAULT_LIMITS,
  DEFAULT_PROOFS_CONFIG,
  decodeProofBlob,
  type EventRecord,
  EventsRepo,
  Limits,
  ListProofsQuery,
  metered,
  type Principal,
  type Prover,
  ProofLoops,
  Proofs,
  ProofsConfig,
  type ProofsConfigShape,
  ProofsRepo,
  RateLimits,
  SCOPES,
  StorageError,
  type Timestamp,
  validateCircuitInputs
} from "@mzk/core"
import { FAKE_BUILTIN_CIRCUITS, FakeProver, type FakeProverOptions, makeSqliteMemoryDatabase, makeSqliteMemoryStore, SqliteMemoryStore, testCore } from "@mzk/testkit"
import { Context, Effect, Exit, Layer, Option, Scope, TestClock } from "effect"

/** Storage lists newest first; this file reads events in the order they happened. */
const oldestFirst = <A>(items: ReadonlyArray<A>): Array<A> => [...items].reverse()

const R = "21888242871839275222246405745257275088548364400416034343698204186575808495617"

/** The core with the proof loops running, the fake prover and the in-memory store, on TestClock. */
const withLoops = (
  prover: FakeProverOptions = {},
  config: Partial<ProofsConfigShape> = {},
  store: Layer.Layer<import("@mzk/core").Storage> = SqliteMemoryStore
) =>
  ProofLoops.pipe(
    Layer.provideMerge(testCore(store, { prover: FakeProver(prover) as Layer.Layer<Prover> })),
    Layer.provide(Layer.succeed(ProofsConfig, { ...DEFAULT_PROOFS_CONFIG, ...config }))
  )

/** Lets forked fibers (the worker, running proofs) catch up without moving the clock. */
const settle = Effect.repeatN(Effect.yieldNow(), 50)
const advance = (duration: Parameters<typeof TestClock.adjust>[0]) => Effect.zipRight(TestClock.adjust(duration), settle)

/** Raw bodies and queries as the HTTP layer receives them: decoded at the boundary, then given to the service. */
const decodeCreate = decodeInput(CreateProofInput)
const decodeBatch = decodeInput(CreateProofBatchInput)
const decodeQuery = decodeInput(ListProofsQuery)

const principalOf = (account_id: AccountId): Principal => ({ account_id, scopes: SCOPES, via: { kind: "session" } })

const newAccount = Effect.map(Effect.flatMap(Accounts, (a) => a.create({ name: "Acme" })), (a) => principalOf(a.id))

const eventsOf = (accountId: AccountId) =>
  Effect.map(Effect.flatMap(EventsRepo, (repo) => repo.list(accountId, { limit: 100 })), (page) => oldestFirst(page.items))

const ofType = (events: ReadonlyArray<EventRecord>, type: string) => events.filter((e) => e.type === type)

const statuses = (accountId: AccountId) =>
  Effect.gen(function*() {
    const { proofs } = yield* (yield* Proofs).list(accountId, { limit: 100 })
    const counts: Record<string, number> = {}
    for (const p of proofs) counts[p.status] = (counts[p.status] ?? 0) + 1
    return counts
  })

/** A multiplier proof (3 × 11) queued and worked to completion by the fake prover (100 ms). */
const completedProof = (principal: Principal) =>
  Effect.gen(function*() {
    const value = yield* (yield* Proofs).create(principal.account_id, { type: "multiplier", inputs: { a: "3", b: "11" } })
    yield* settle
    yield* advance("100 millis")
    return value
  })

const dailyRemaining = (principal: Principal) =>
  Effect.map(
    Effect.flatMap(RateLimits, (r) => r.admitProofRequest(principal.account_id, { proofs: 0 })),
    (windows) => windows.find((w) => w.policy === "daily")?.remaining
  )

describe("Proofs: validation before anything is queued", () => {
  const refused: ReadonlyArray<[string, unknown, ReadonlyArray<string>]> = [
    ["missing input", { type: "multiplier", inputs: { a: "3" } }, ["inputs.b"]],
    ["extra input", { type: "multiplier", inputs: { a: "3", b: "5", x: "1" } }, ["inputs.x"]],
    ["non-integer number", { type: "multiplier", inputs: { a: 1.5, b: "5" } }, ["inputs.a"]],
    ["non-integer string", { type: "multiplier", inputs: { a: "1.5", b: "abc" } }, ["inputs.a", "inputs.b"]],
    ["out of field (a = r)", { type: "multiplier", inputs: { a: R, b: "5" } }, ["inputs.a"]],
    ["negative number and string", { type: "multiplier", inputs: { a: -5, b: "-5" } }, ["inputs.a", "inputs.b"]],
    ["unsafe JSON number", { type: "multiplier", inputs: { a: 2 ** 60, b: "5" } }, ["inputs.a"]],
    ["leading zero", { type: "multiplier", inputs: { a: "03", b: "5" } }, ["inputs.a"]],
    ["uint64 overflow", { type: "range", inputs: { value: (2n ** 64n).toString(), min: "0", max: "10" } }, ["inputs.value"]],
    ["array element not a bit", {
      type: "merkle_membership",
      inputs: { secret: "1", root: "2", path_elements: Array(20).fill("0"), path_indices: [...Array(19).fill(0), 2] }
    }, ["inputs.path_indices.19"]],
    ["array of the wrong length", {
      type: "merkle_membership",
      inputs: { secret: "1", root: "2", path_elements: Array(19).fill("0"), path_indices: Array(20).fill(0) }
    }, ["inputs.path_elements"]],
    ["array for a scalar", { type: "multiplier", inputs: { a: ["1"], b: "5" } }, ["inputs.a"]],
    ["unknown type", { type: "sudoku", inputs: {} }, ["type"]],
    ["no inputs", { type: "multiplier" }, ["inputs"]],
    ["extra top-level field", { type: "multiplier", inputs: { a: "3", b: "5" }, note: 1 }, ["note"]]
  ]

  for (const [label, body, paths] of refused) {
    it.effect(`${label} → invalid_request naming ${paths.join(", ")}; nothing queued or charged`, () =>
      Effect.gen(function*() {
        const principal = yield* newAccount
        const proofs = yield* Proofs
        const error = yield* Effect.flip(Effect.flatMap(decodeCreate(body), (input) => proofs.create(principal.account_id, input)))
        if (error._tag !== "InvalidRequest") return expect.fail(`expected InvalidRequest, got ${error._tag}`)
        expect(error.details?.map((d) => d.path)).toEqual(paths)
        expect((yield* (yield* Proofs).list(principal.account_id, {})).total).toBe(0)
        expect(yield* dailyRemaining(principal)).toBe(DEFAULT_LIMITS.proofsPerDayPerAccount)
      }).pipe(Effect.provide(testCore())))
  }

  it.effect("valid inputs are normalised to canonical decimal strings; public inputs are known at once", () =>
    Effect.gen(function*() {
      const principal = yield* newAccount
      const { value, rate_limits } = yield* metered((yield* Proofs).create(principal.account_id, {
        type: "range",
        inputs: { value: 7, min: "0", max: (2n ** 64n - 1n).toString() }
      }))
      expect(value).toMatchObject({ type: "range", circuit: "range", status: "queued", proof_blob: null, error: null })
      expect(value.public_inputs).toEqual({ min: "0", max: "18446744073709551615" })
      expect(rate_limits.find((w) => w.policy === "daily")?.remaining).toBe(DEFAULT_LIMITS.proofsPerDayPerAccount - 1)
      const stored = yield* (yield* ProofsRepo).get(principal.account_id, value.proof_id)
      expect(Option.map(stored, (r) => r.inputs)).toEqual(Option.some({ value: "7", min: "0", max: "18446744073709551615" }))
    }).pipe(Effect.provide(testCore())))
})

describe("Proofs: batches", () => {
  const good = { type: "multiplier", inputs: { a: "3", b: "5" } }

  it.effect("a batch is all or nothing: one bad item refuses it whole, its path names the index", () =>
    Effect.gen(function*() {
      const principal = yield* newAccount
      const proofs = yield* Proofs
      const items = [good, good, good, { type: "multiplier", inputs: { a: "x", b: "5" } }, { type: "nope", inputs: {} }]
      const error = yield* Effect.flip(proofs.createBatch(principal.account_id, { proofs: items }))
      if (error._tag !== "InvalidRequest") return expect.fail(error._tag)
      expect(error.details?.map((d) => d.path)).toEqual(["proofs.3.inputs.a", "proofs.4.type"])
      expect((yield* proofs.list(principal.account_id, {})).total).toBe(0)
      expect(yield* dailyRemaining(principal)).toBe(DEFAULT_LIMITS.proofsPerDayPerAccount)
    }).pipe(Effect.provide(testCore())))

  it.effect("1 to 100 proofs: 0 and 101 are refused; a valid batch is queued under one batch_id and charged its size", () =>
    Effect.gen(function*() {
      const principal = yield* newAccount
      const proofs = yield* Proofs
      for (const n of [0, 101]) {
        const error = yield* Effect.flip(proofs.createBatch(principal.account_id, { proofs: Array(n).fill(good) }))
        expect(error).toMatchObject({ _tag: "InvalidRequest", details: [{ path: "proofs" }] })
      }
      expect((yield* Effect.flip(Effect.flatMap(decodeBatch({ items: [good] }), (input) => proofs.createBatch(principal.account_id, input))))._tag)
        .toBe("InvalidRequest")
      const { value, rate_limits } = yield* metered(proofs.createBatch(principal.account_id, { proofs: Array(100).fill(good) }))
      expect(value.batch_id).toMatch(/^batch_/)
      expect(value.proofs.length).toBe(100)
      expect(new Set(value.proofs.map((p) => p.proof_id)).size).toBe(100)
      expect(value.proofs.every((p) => p.status === "queued")).toBe(true)
      expect(rate_limits.find((w) => w.policy === "daily")?.remaining).toBe(DEFAULT_LIMITS.proofsPerDayPerAccount - 100)
    }).pipe(Effect.provide(testCore())))

  it.effect("a batch over the daily quota is refused whole and queues nothing", () =>
    Effect.gen(function*() {
      const principal = yield* newAccount
      const proofs = yield* Proofs
      yield* proofs.createBatch(principal.account_id, { proofs: Array(3).fill(good) })
      const error = yield* Effect.flip(proofs.createBatch(principal.account_id, { proofs: Array(3).fill(good) }))
      expect(error).toMatchObject({ _tag: "RateLimitExceeded", policy: "daily" })
      expect((yield* proofs.list(principal.account_id, {})).total).toBe(3)
    }).pipe(
      Effect.provide(testCore()),
      Effect.provide(Layer.succeed(Limits, { ...DEFAULT_LIMITS, proofsPerDayPerAccount: 5 }))
    ))

  it.effect("the quota is charged in the insert's transaction: a failed insert costs nothing", () =>
    Effect.gen(function*() {
      const principal = yield* newAccount
      const error = yield* Effect.flip((yield* Proofs).create(principal.account_id, good))
      expect(error._tag).toBe("StorageError")
      expect(yield* dailyRemaining(principal)).toBe(DEFAULT_LIMITS.proofsPerDayPerAccount)
    }).pipe(Effect.provide(testCore(Layer.effectContext(Effect.map(makeSqliteMemoryStore, (ctx) =>
      Context.add(ctx, ProofsRepo, {
        ...Context.get(ctx, ProofsRepo),
        insertMany: () => Effect.fail(new StorageError({ message: "disk full" }))
      })
    ))))))
})

describe("Proofs: get, list", () => {
  it.effect("get finds the account's own proofs only; list filters by status and pages", () =>
    Effect.gen(function*() {
      const principal = yield* newAccount
      const other = yield* newAccount
      const proofs = yield* Proofs
      const made = []
      for (let i = 0; i < 3; i++) made.push((yield* proofs.create(principal.account_id, { type: "multiplier", inputs: { a: "2", b: String(i + 2) } })))
      expect(yield* proofs.get(principal.account_id, made[1]!.proof_id)).toEqual(made[1])
      expect((yield* Effect.flip(proofs.get(other.account_id, made[1]!.proof_id)))._tag).toBe("ProofNotFound")
      expect((yield* Effect.flip(proofs.get(principal.account_id, "proof_nope")))._tag).toBe("ProofNotFound")
      // Newest first.
      const page = yield* proofs.list(principal.account_id, { limit: 2 })
      expect([page.proofs.map((p) => p.proof_id), page.total, page.has_more]).toEqual([[made[2]!.proof_id, made[1]!.proof_id], 3, true])
      const rest = yield* proofs.list(principal.account_id, { starting_after: made[1]!.proof_id })
      expect(rest.proofs.map((p) => p.proof_id)).toEqual([made[0]!.proof_id])
      expect((yield* proofs.list(principal.account_id, { status: "completed" })).total).toBe(0)
      // A query string carries text: `?status=done`, `?limit=101`.
      for (const query of [{ status: "done" }, { limit: "101" }]) {
        expect((yield* Effect.flip(Effect.flatMap(decodeQuery(query), (q) => proofs.list(principal.account_id, q))))._tag).toBe("InvalidRequest")
      }
    }).pipe(Effect.provide(testCore())))
})

describe("Proofs: the lifecycle on TestClock", () => {
  it.effect("queued → running → completed with the blob, public inputs, duration and a proof.completed event", () =>
    Effect.gen(function*() {
      const principal = yield* newAccount
      const proofs = yield* Proofs
      const queued = yield* proofs.create(principal.account_id, { type: "multiplier", inputs: { a: "3", b: "11" } })
      yield* settle
      expect((yield* proofs.get(principal.account_id, queued.proof_id)).status).toBe("running")
      yield* advance("250 millis")
      const done = yield* proofs.get(principal.account_id, queued.proof_id)
      expect(done).toMatchObject({ status: "completed", public_inputs: { c: "33" }, duration_ms: 250, error: null })
      expect(Option.getOrThrow(decodeProofBlob(done.proof_blob!))).toMatchObject({ protocol: "groth16", curve: "bn128" })
      expect(done.completed_at).toBe("1970-01-01T00:00:00.250Z")
      expect(done.expires_at).toBe("1970-01-31T00:00:00.250Z")
      const [event] = ofType(yield* eventsOf(principal.account_id), "proof.completed")
      expect(event?.data).toEqual({
        proof_id: queued.proof_id,
        circuit: "multiplier",
        circuit_version: 1,
        proving_system: "groth16",
        status: "completed",
        proof_blob: done.proof_blob,
        public_inputs: { c: "33" },
        duration_ms: 250,
        created_at: queued.created_at,
        metadata: {}
      })
    }).pipe(Effect.provide(withLoops({ duration: "250 millis" }))))

  it.effect("a worker that stops mid-proof hands it back: queued, attempt uncounted, and another worker proves it at once", () =>
    Effect.gen(function*() {
      // Two processes' cores over one store: the first stops while proving.
      const store = Layer.succeedContext(yield* makeSqliteMemoryStore)
      const core = withLoops({ duration: "10 seconds" }, {}, store)
      const firstScope = yield* Scope.make()
      const first = yield* Layer.buildWithScope(core, firstScope)
      const principal = yield* newAccount.pipe(Effect.provide(first))
      const queued = yield* Effect.flatMap(Proofs, (p) => p.create(principal.account_id, { type: "multiplier", inputs: { a: "3", b: "11" } }))
        .pipe(Effect.provide(first))
      yield* settle
      const stored = (ctx: Context.Context<ProofsRepo>) =>
        Effect.map(Effect.flatMap(ProofsRepo, (repo) => repo.get(principal.account_id, queued.proof_id)), Option.getOrThrow).pipe(Effect.provide(ctx))
      expect(yield* stored(first)).toMatchObject({ status: "running", attempts: 1 })
      yield* Scope.close(firstScope, Exit.void)
      expect(yield* stored(first)).toMatchObject({ status: "queued", attempts: 0, lease_expires_at: null, started_at: null })

      // Far sooner than the lease (timeout + margin, 90 s) would have lapsed.
      const second = yield* Layer.build(core)
      yield* settle
      yield* advance("10 seconds")
      expect(yield* stored(second)).toMatchObject({ status: "completed", attempts: 1, public_inputs: { c: "33" } })
    }).pipe(Effect.scoped))

  it.effect("the 11th concurrent proof of an account waits queued until one finishes; other accounts are not held up", () =>
    Effect.gen(function*() {
      const busy = yield* newAccount
      const other = yield* newAccount
      const proofs = yield* Proofs
      for (let i = 0; i < 11; i++) yield* proofs.create(busy.account_id, { type: "multiplier", inputs: { a: "2", b: String(i + 2) } })
      yield* settle
      expect(yield* statuses(busy.account_id)).toEqual({ running: 10, queued: 1 })
      yield* proofs.create(other.account_id, { type: "multiplier", inputs: { a: "2", b: "3" } })
      yield* settle
      expect(yield* statuses(other.account_id)).toEqual({ running: 1 })
      yield* advance("9999 millis")
      expect(yield* statuses(busy.account_id)).toEqual({ running: 10, queued: 1 })
      yield* advance("1 millis")
      // The first ten settle; the eleventh is claimed at once (the worker is nudged, not polling).
      expect(yield* statuses(busy.account_id)).toEqual({ completed: 10, running: 1 })
      yield* advance("10 seconds")
      expect(yield* statuses(busy.account_id)).toEqual({ completed: 11 })
    }).pipe(Effect.provide(withLoops({ duration: "10 seconds" }, { workerConcurrency: 50 }))))

  it.effect("a proof past its timeout fails with timeout and a proof.failed event", () =>
    Effect.gen(function*() {
      const principal = yield* newAccount
      const proofs = yield* Proofs
      const value = yield* proofs.create(principal.account_id, { type: "range", inputs: { value: "5", min: "1", max: "9" } })
      yield* settle
      yield* advance("59999 millis")
      expect((yield* proofs.get(principal.account_id, value.proof_id)).status).toBe("running")
      yield* advance("1 millis")
      const failed = yield* proofs.get(principal.account_id, value.proof_id)
      expect(failed).toMatchObject({ status: "failed", duration_ms: 60_000, proof_blob: null, error: { code: "timeout" } })
      const [event] = ofType(yield* eventsOf(principal.account_id), "proof.failed")
      expect(event?.data).toEqual({
        proof_id: value.proof_id,
        circuit: "range",
        circuit_version: 1,
        proving_system: "groth16",
        status: "failed",
        error: failed.error,
        public_inputs: { min: "1", max: "9" },
        duration_ms: 60_000,
        created_at: value.created_at,
        metadata: {}
      })
    }).pipe(Effect.provide(withLoops({ duration: "5 minutes" }))))

  it.effect("constraint violations are accepted, then end failed with constraint_violation and proof.failed", () =>
    Effect.gen(function*() {
      const principal = yield* newAccount
      const proofs = yield* Proofs
      const a = (yield* proofs.create(principal.account_id, { type: "multiplier", inputs: { a: 1, b: 7 } }))
      const b = (yield* proofs.create(principal.account_id, { type: "range", inputs: { value: 3, min: 5, max: 9 } }))
      expect([a.status, b.status]).toEqual(["queued", "queued"])
      yield* settle
      yield* advance("1 second")
      for (const proof of [a, b]) {
        const failed = yield* proofs.get(principal.account_id, proof.proof_id)
        expect(failed).toMatchObject({ status: "failed", error: { code: "constraint_violation" }, proof_blob: null })
      }
      const events = ofType(yield* eventsOf(principal.account_id), "proof.failed")
      expect(events.map((e) => [e.data.proof_id, (e.data.error as { code: string }).code]).sort()).toEqual([
        [a.proof_id, "constraint_violation"],
        [b.proof_id, "constraint_violation"]
      ].sort())
    }).pipe(Effect.provide(withLoops())))

  it.effect("scripted prover failures are classified on the proof (internal, invalid_inputs)", () =>
    Effect.gen(function*() {
      const principal = yield* newAccount
      const proofs = yield* Proofs
      const first = (yield* proofs.create(principal.account_id, { type: "multiplier", inputs: { a: "2", b: "3" } }))
      yield* settle
      const second = (yield* proofs.create(principal.account_id, { type: "multiplier", inputs: { a: "2", b: "13" } }))
      yield* settle
      yield* advance("1 second")
      expect((yield* proofs.get(principal.account_id, first.proof_id)).error).toEqual({ code: "internal", message: "worker crashed" })
      expect((yield* proofs.get(principal.account_id, second.proof_id)).error?.code).toBe("invalid_inputs")
    }).pipe(Effect.provide(withLoops({
      script: [{ code: "internal", message: "worker crashed" }],
      failWhen: ({ inputs }) => (inputs.b === "13" ? { code: "invalid_inputs" } : undefined)
    }))))

  it.effect("a proof that does not verify is never completed: failed with verification_failed and proof.failed, its daily unit given back", () =>
    Effect.gen(function*() {
      const principal = yield* newAccount
      const proofs = yield* Proofs
      const before = (yield* dailyRemaining(principal))!
      const value = yield* proofs.create(principal.account_id, { type: "multiplier", inputs: { a: "3", b: "11" } })
      expect(yield* dailyRemaining(principal)).toBe(before - 1)
      yield* settle
      yield* advance("100 millis")
      const failed = yield* proofs.get(principal.account_id, value.proof_id)
      expect(failed).toMatchObject({ status: "failed", proof_blob: null, error: { code: "verification_failed" } })
      expect(failed.error?.message).toMatch(/does not verify against the circuit's verification key/)
      const events = yield* eventsOf(principal.account_id)
      expect(ofType(events, "proof.completed")).toEqual([])
      expect(ofType(events, "proof.failed").map((e) => e.data.error)).toEqual([failed.error])
      expect(yield* dailyRemaining(principal)).toBe(before)
      // A proof that verifies completes and stays charged; so does one the inputs made fail.
      const next = yield* completedProof(principal)
      expect((yield* proofs.get(principal.account_id, next.proof_id)).status).toBe("completed")
      const violated = (yield* proofs.create(principal.account_id, { type: "multiplier", inputs: { a: "1", b: "11" } }))
      yield* settle
      yield* advance("100 millis")
      expect((yield* proofs.get(principal.account_id, violated.proof_id)).error?.code).toBe("constraint_violation")
      expect(yield* dailyRemaining(principal)).toBe(before - 2)
    }).pipe(Effect.provide(withLoops({ script: ["invalid_proof"] }))))

  it.effect("proofs past retention expire, lose their blob and fire proof.expired", () =>
    Effect.gen(function*() {
      const principal = yield* newAccount
      const proofs = yield* Proofs
      const value = yield* completedProof(principal)
      const completed = yield* proofs.get(principal.account_id, value.proof_id)
      expect(completed.status).toBe("completed")
      // Retention: 30 days after completion. The sweeper runs every 6 hours here (each TestClock
      // wake-up costs real time), so the first sweep after expiry is at 30 d 6 h.
      yield* advance("29 days")
      yield* advance("23 hours")
      yield* advance("58 minutes")
      expect((yield* proofs.get(principal.account_id, value.proof_id)).status).toBe("completed")
      yield* advance("6 hours")
      expect((yield* proofs.get(principal.account_id, value.proof_id)).status).toBe("completed")
      yield* advance("3 minutes")
      const expired = yield* proofs.get(principal.account_id, value.proof_id)
      expect(expired).toMatchObject({ status: "expired", proof_blob: null, public_inputs: { c: "33" } })
      const [event] = ofType(yield* eventsOf(principal.account_id), "proof.expired")
      expect(event?.data).toMatchObject({ proof_id: value.proof_id, circuit: "multiplier", status: "expired", created_at: value.created_at })
      expect((event?.data.expired_at as string) >= completed.expires_at!).toBe(true)
      expect((yield* Effect.flip(proofs.verify(principal.account_id, value.proof_id)))._tag).toBe("ProofNotReady")
    }).pipe(Effect.provide(withLoops({}, { pollIntervalMs: 86_400_000, sweepIntervalMs: 21_600_000 }))))

  it.effect("a dead worker's proof is taken over when its lease lapses; one that keeps dying fails as internal", () =>
    Effect.gen(function*() {
      const { connection, store } = yield* makeSqliteMemoryDatabase
      yield* Effect.gen(function*() {
        const principal = yield* newAccount
        const proofs = yield* Proofs
        const value = yield* proofs.create(principal.account_id, { type: "multiplier", inputs: { a: "3", b: "11" } })
        const doomed = yield* proofs.create(principal.account_id, { type: "multiplier", inputs: { a: "3", b: "12" } })
        // Rows as a crashed process leaves them: running, with a lease that runs out in 10 s.
        const lease = "1970-01-01T00:00:10.000Z" as Timestamp
        for (const [id, attempts] of [[value.proof_id, 1], [doomed.proof_id, DEFAULT_PROOFS_CONFIG.maxAttempts]] as const) {
          yield* connection.affected((db) =>
            db.updateTable("proofs").set((eb) => ({ status: "running", attempts, started_at: eb.ref("created_at"), lease_expires_at: lease }))
              .where("id", "=", id)
          )
        }
        yield* advance("9 seconds")
        expect(yield* statuses(principal.account_id)).toEqual({ running: 2 })
        yield* advance("2 seconds")
        yield* advance("100 millis")
        expect(yield* proofs.get(principal.account_id, value.proof_id)).toMatchObject({ status: "completed", public_inputs: { c: "33" } })
        expect(yield* proofs.get(principal.account_id, doomed.proof_id)).toMatchObject({ status: "failed", error: { code: "internal" } })
      }).pipe(Effect.provide(withLoops({ duration: "100 millis" }, {}, Layer.succeedContext(store))))
    }))

  it.effect("verify: completed proofs verify and fire proof.verified; others are not ready; unknown ids not found", () =>
    Effect.gen(function*() {
      const principal = yield* newAccount
      const proofs = yield* Proofs
      const value = yield* proofs.create(principal.account_id, { type: "multiplier", inputs: { a: "3", b: "11" } })
      expect((yield* Effect.flip(proofs.verify(principal.account_id, value.proof_id)))._tag).toBe("ProofNotReady")
      yield* settle
      yield* advance("100 millis")
      const { value: verification, rate_limits } = yield* metered(proofs.verify(principal.account_id, value.proof_id))
      expect(verification).toEqual({ proof_id: value.proof_id, circuit: "multiplier", circuit_version: 1, proving_system: "groth16", valid: true, verified_at: "1970-01-01T00:00:00.100Z", metadata: {} })
      expect(rate_limits.map((w) => w.policy)).toEqual(["daily"])
      const [event] = ofType(yield* eventsOf(principal.account_id), "proof.verified")
      expect(event?.data).toEqual(verification)
      expect((yield* Effect.flip(proofs.verify(principal.account_id, "proof_00000000000000000000000000")))._tag).toBe("ProofNotFound")
      const other = yield* newAccount
      expect((yield* Effect.flip(proofs.verify(other.account_id, value.proof_id)))._tag).toBe("ProofNotFound")
    }).pipe(Effect.provide(withLoops())))

  it.effect("verify reports a tampered stored proof as invalid", () =>
    Effect.gen(function*() {
      const { connection, store } = yield* makeSqliteMemoryDatabase
      yield* Effect.gen(function*() {
        const principal = yield* newAccount
        const proofs = yield* Proofs
        const value = yield* completedProof(principal)
        // Rewrite the stored public input as a compromised database row would.
        yield* connection.affected((db) =>
          db.updateTable("proofs").set({ public_inputs: JSON.stringify({ c: "34" }) }).where("id", "=", value.proof_id)
        )
        expect((yield* proofs.verify(principal.account_id, value.proof_id)).valid).toBe(false)
      }).pipe(Effect.provide(withLoops({}, {}, Layer.succeedContext(store))))
    }))
})

describe("Proofs: inputs named like Object.prototype's keys", () => {
  it("keeps an input called __proto__ as an input (a valid circom identifier), public ones included", () => {
    const circuit = {
      ...FAKE_BUILTIN_CIRCUITS[0]!,
      inputs: [
        { name: "__proto__", visibility: "public" as const, kind: "field" as const, dimensions: [] },
        { name: "constructor", visibility: "private" as const, kind: "field" as const, dimensions: [2] }
      ]
    }
    const inputs = JSON.parse(`{"__proto__": "7", "constructor": [1, "2"]}`) as Parameters<typeof validateCircuitInputs>[1]
    const checked = validateCircuitInputs(circuit, inputs)
    expect(checked._tag).toBe("Right")
    if (checked._tag !== "Right") return
    expect(Object.keys(checked.right.inputs)).toEqual(["__proto__", "constructor"])
    expect(JSON.parse(JSON.stringify(checked.right))).toEqual(JSON.parse('{"inputs": {"__proto__": "7", "constructor": ["1", "2"]}, "public_inputs": {"__proto__": "7"}}'))
  })
})
