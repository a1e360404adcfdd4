import { PostgresStore } from "@mzk/adapters-postgres"
import {
  type AccountId,
  Accounts,
  DEFAULT_LIMITS,
  DEFAULT_WEBHOOK_CONFIG,
  Events,
  makeId,
  now,
  type Principal,
  Proofs,
  SCOPES,
  WebhookConfig,
  Webhooks
} from "@mzk/core"
import { startWebhookReceiver, testCore } from "@mzk/testkit"
import { expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import type { DeliveryWorkerOptions } from "./fixtures/deliveryWorker.js"
import type { ProofWorkerOptions } from "./fixtures/proofWorker.js"
import { describePostgres, freshDatabaseUrl } from "./freshDatabase.js"
import { eventually, fixture, spawnWorker, sqlClient } from "./workerProcesses.js"

/**
 * Tenant fairness with two worker processes sharing one Postgres database: each
 * engine gives an account only its share of its own slots, claims take turns across accounts, and
 * SKIP LOCKED (deliveries) and account locks (proofs) keep the two processes' claims apart.
 */

/** A fresh database, the core services over it (no loops: the children do the work), a SQL client, two accounts. */
const setUp = Effect.gen(function*() {
  const { url } = yield* freshDatabaseUrl
  const core = yield* Layer.build(
    testCore(PostgresStore({ connectionString: url, poolSize: 5 }), { seed: "parent" }).pipe(
      Layer.provide(Layer.succeed(WebhookConfig, { ...DEFAULT_WEBHOOK_CONFIG, allowInsecureWebhooks: true }))
    )
  )
  const account = (name: string) => Effect.map(Effect.flatMap(Accounts, (a) => a.create({ name })), (a) => a.id).pipe(Effect.provide(core))
  const busy = yield* account("Busy")
  const quiet = yield* account("Quiet")
  const principal = (id: AccountId): Principal => ({ account_id: id, scopes: [...SCOPES], via: { kind: "session" } })
  return { url, core, busy, quiet, principal, query: yield* sqlClient(url) }
})

const n = (rows: ReadonlyArray<{ readonly n: number }>) => rows[0]?.n ?? 0

describePostgres("tenant fairness across two worker processes on one Postgres database", () => {
  it.scopedLive("an account whose 20 receivers hang holds only its share in each process: another account's event arrives before any of them times out", () =>
    Effect.gen(function*() {
      const { busy, core, quiet, url } = yield* setUp
      const receiver = yield* startWebhookReceiver({ host: "127.0.0.1", reply: (request) => (request.path.startsWith("/hang") ? { hang: true } : {}) })
      const origin = `http://127.0.0.1:${receiver.port}`
      yield* Effect.gen(function*() {
        const webhooks = yield* Webhooks
        for (let i = 0; i < 20; i++) yield* webhooks.create(busy, { url: `${origin}/hang/${i}`, events: ["key.revoked"] })
        yield* webhooks.create(quiet, { url: `${origin}/ok`, events: ["key.revoked"] })
      }).pipe(Effect.provide(core))
      const options: DeliveryWorkerOptions = { timeoutMs: DEFAULT_WEBHOOK_CONFIG.timeoutMs, leaseMs: 60_000, pollIntervalMs: 200 }
      const workers = yield* Effect.all([spawnWorker(fixture("deliveryWorker.ts"), [url, JSON.stringify(options)]), spawnWorker(fixture("deliveryWorker.ts"), [url, JSON.stringify(options)])])
      yield* Effect.all(workers.map((w) => w.ready), { concurrency: "unbounded" })

      const revoked = (account: AccountId, name: string) =>
        Effect.gen(function*() {
          yield* (yield* Events).record(account, "key.revoked", { id: yield* makeId("key"), name, revoked_at: yield* now, metadata: {} })
        }).pipe(Effect.provide(core))
      // 8 events to 20 hanging webhooks: 160 deliveries, more than both processes' 2 × 64 slots.
      for (let i = 0; i < 8; i++) yield* revoked(busy, `busy ${i}`)
      const hanging = Effect.map(receiver.received, (all) => all.filter((r) => r.path.startsWith("/hang")))
      const shares = 2 * DEFAULT_WEBHOOK_CONFIG.maxConcurrentPerAccount
      const seen = yield* eventually(hanging, (all) => all.length >= shares, "20 seconds", "both processes' share of hanging attempts")
      const busyFirst = Math.min(...seen.map((r) => r.receivedAtMs))

      const sentAt = Date.now()
      yield* revoked(quiet, "quiet")
      // Before the fix all 128 slots held hanging attempts, and this waited for their 10 s timeouts.
      const arrived = yield* eventually(
        Effect.map(receiver.received, (all) => all.find((r) => r.path === "/ok")),
        (found) => found !== undefined,
        "15 seconds",
        "the quiet account's delivery"
      )
      console.log(`the quiet account's event arrived ${arrived!.receivedAtMs - sentAt} ms after it was recorded`)
      expect(arrived!.receivedAtMs - busyFirst).toBeLessThan(DEFAULT_WEBHOOK_CONFIG.timeoutMs)
      // None of the busy account's attempts has ended (none can before its timeout): what its
      // receivers got is what it holds, its share in each process.
      expect((yield* hanging).length).toBe(shares)
    }), 60_000)

  it.scopedLive("an account with 200 queued proofs does not hold another account's proof behind them, and never runs more than its 10 over both processes", () =>
    Effect.gen(function*() {
      const { busy, core, principal, query, quiet, url } = yield* setUp
      // 2 × 6 prover threads, more than the account's cap of 10; each proof takes 1 s.
      const options: ProofWorkerOptions = { proveMs: 1_000, timeoutMs: 10_000, leaseMarginMs: 5_000, pollIntervalMs: 200, capacity: 6 }
      const workers = yield* Effect.all([spawnWorker(fixture("proofWorker.ts"), [url, JSON.stringify(options)]), spawnWorker(fixture("proofWorker.ts"), [url, JSON.stringify(options)])])
      yield* Effect.all(workers.map((w) => w.ready), { concurrency: "unbounded" })

      const mine = yield* Effect.gen(function*() {
        const proofs = yield* Proofs
        for (const from of [0, 100]) {
          yield* proofs.createBatch(principal(busy).account_id, {
            proofs: Array.from({ length: 100 }, (_, i) => ({ type: "multiplier", inputs: { a: String(from + i + 2), b: "3" } }))
          })
        }
        return (yield* proofs.create(principal(quiet).account_id, { type: "multiplier", inputs: { a: "7", b: "6" } }))
      }).pipe(Effect.provide(core))

      let mostRunning = 0
      const status = query<{ status: string; n: number }>(
        "select status, count(*)::int as n from proofs where account_id = $1 group by status", [busy]
      )
      const quietDone = query<{ n: number }>("select count(*)::int as n from proofs where id = $1 and status = 'completed'", [mine.proof_id])
      yield* eventually(
        Effect.zip(status, quietDone).pipe(Effect.tap(([rows]) => {
          mostRunning = Math.max(mostRunning, rows.find((r) => r.status === "running")?.n ?? 0)
        })),
        ([, done]) => n(done) === 1,
        "40 seconds",
        "the quiet account's proof completed"
      )
      // Before the fix it waited until the claims' window of oldest proofs reached it: until
      // fewer than about 20 of the busy account's were left queued.
      const queued = (yield* status).find((r) => r.status === "queued")?.n ?? 0
      expect(queued).toBeGreaterThan(100)
      expect(mostRunning).toBeGreaterThan(0)
      expect(mostRunning).toBeLessThanOrEqual(DEFAULT_LIMITS.maxRunningProofsPerAccount)
    }), 60_000)
})
