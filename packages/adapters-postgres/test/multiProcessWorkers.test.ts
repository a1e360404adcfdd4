import { PostgresStore } from "@mzk/adapters-postgres"
import {
  type AccountId,
  Accounts,
  DEFAULT_WEBHOOK_CONFIG,
  type Ids,
  type EventEnvelope,
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
import { Context, Effect, Layer } from "effect"
import type { DeliveryWorkerOptions } from "./fixtures/deliveryWorker.js"
import type { ProofWorkerOptions } from "./fixtures/proofWorker.js"
import { describePostgres, freshDatabaseUrl } from "./freshDatabase.js"
import { eventually, fixture, spawnWorker, sqlClient } from "./workerProcesses.js"

const proofWorker = fixture("proofWorker.ts")
const deliveryWorker = fixture("deliveryWorker.ts")

const startProofWorker = (url: string, options: ProofWorkerOptions) => spawnWorker(proofWorker, [url, JSON.stringify(options)])
const startDeliveryWorker = (url: string, options: DeliveryWorkerOptions) =>
  spawnWorker(deliveryWorker, [url, JSON.stringify(options)])

/**
 * A fresh database, migrated by this (parent) process before any worker starts, the core services
 * over it (no loops here: the work is done by the child processes), a plain SQL client for the
 * checks, and one account. Webhook URLs on 127.0.0.1 are allowed, as the workers allow them.
 */
const setUp = Effect.gen(function*() {
  const { url } = yield* freshDatabaseUrl
  const core = yield* Layer.build(
    testCore(PostgresStore({ connectionString: url, poolSize: 5 }), { seed: "parent" }).pipe(
      Layer.provide(Layer.succeed(WebhookConfig, { ...DEFAULT_WEBHOOK_CONFIG, allowInsecureWebhooks: true }))
    )
  )
  const account = yield* Effect.flatMap(Accounts, (a) => a.create({ name: "Shared" })).pipe(Effect.provide(core))
  const query = yield* sqlClient(url)
  const principal: Principal = { account_id: account.id, scopes: [...SCOPES], via: { kind: "session" } }
  return { url, core, account: account.id, principal, query }
})

const count = (rows: ReadonlyArray<{ readonly n: number }>) => rows[0]?.n ?? 0

/** Records `n` events of one type, 10 at a time; each fans out to the account's webhook. */
const recordEvents = (core: Context.Context<Events | Ids>, account: AccountId, n: number) =>
  Effect.forEach(Array.from({ length: n }, (_, i) => i), (i) =>
    Effect.gen(function*() {
      const events = yield* Events
      return yield* events.record(account, "key.revoked", { id: yield* makeId("key"), name: `key ${i}`, revoked_at: yield* now, metadata: {} })
    }), { concurrency: 10 }).pipe(Effect.provide(core))

describePostgres("Postgres workers across processes", () => {
  it.scopedLive("two worker processes drain 200 queued proofs: every proof completes exactly once, and both did part of it", () =>
    Effect.gen(function*() {
      const { account, core, principal, query, url } = yield* setUp
      const options: ProofWorkerOptions = { proveMs: 30, timeoutMs: 10_000, leaseMarginMs: 5_000, pollIntervalMs: 200 }
      const workers = yield* Effect.all([startProofWorker(url, options), startProofWorker(url, options)])
      yield* Effect.all(workers.map((w) => w.ready), { concurrency: "unbounded" })

      // Queued through the service, as the API does: two batches of 100 (the largest allowed).
      const proofs = yield* Effect.flatMap(Proofs, (p) =>
        Effect.forEach([0, 1], (batch) =>
          p.createBatch(principal.account_id, {
            proofs: Array.from({ length: 100 }, (_, i) => ({ type: "multiplier", inputs: { a: String(batch * 100 + i + 2), b: "3" } }))
          }))).pipe(Effect.provide(core))
      const ids = proofs.flatMap((b) => b.proofs.map((p) => p.proof_id))
      expect(new Set(ids).size).toBe(200)

      yield* eventually(
        query<{ n: number }>("select count(*)::int as n from proofs where status <> 'queued' and status <> 'running'"),
        (rows) => count(rows) === 200,
        "40 seconds",
        "200 proofs settled"
      )
      const reports = yield* Effect.all(workers.map((w) => w.stop))

      const rows = yield* query<{ id: string; status: string; attempts: number; account_id: string }>(
        "select id, status, attempts, account_id from proofs order by id"
      )
      expect(rows.map((r) => r.id)).toEqual([...ids].sort())
      expect(rows.filter((r) => r.status !== "completed" || r.attempts !== 1 || r.account_id !== account)).toEqual([])

      const events = yield* query<{ type: string; data: string }>("select type, data from events order by id")
      expect(events.every((e) => e.type === "proof.completed")).toBe(true)
      const completed = events.map((e) => (JSON.parse(e.data) as { proof_id: string }).proof_id)
      expect(completed).toHaveLength(200)
      expect(new Set(completed)).toEqual(new Set(ids))

      // The fake prover counts its calls in each process: 200 in all means nothing was proved twice.
      const proved = reports.map((r) => r.proved as number)
      console.log(`200 proofs over two worker processes: ${proved.join(" + ")}`)
      expect(proved.reduce((a, b) => a + b, 0)).toBe(200)
      expect(proved.every((n) => n > 0)).toBe(true)
    }), 60_000)

  it.scopedLive("two worker processes drain 500 due deliveries to a real receiver: each event arrives exactly once, both sent some", () =>
    Effect.gen(function*() {
      const { account, core, query, url } = yield* setUp
      const receiver = yield* startWebhookReceiver({ host: "127.0.0.1" })
      const webhook = yield* Effect.flatMap(Webhooks, (w) => w.create(account, { url: receiver.url, events: ["key.revoked"] }))
        .pipe(Effect.provide(core))
      const options: DeliveryWorkerOptions = { timeoutMs: 5_000, leaseMs: 30_000, pollIntervalMs: 200 }
      const workers = yield* Effect.all([startDeliveryWorker(url, options), startDeliveryWorker(url, options)])
      yield* Effect.all(workers.map((w) => w.ready), { concurrency: "unbounded" })

      const recorded = yield* recordEvents(core, account, 500)
      expect(count(yield* query<{ n: number }>("select count(*)::int as n from deliveries"))).toBe(500)

      yield* receiver.waitFor(500).pipe(Effect.timeoutFail({ duration: "40 seconds", onTimeout: () => "500 requests not received" }), Effect.orDie)
      yield* eventually(
        query<{ n: number }>("select count(*)::int as n from deliveries where status <> 'pending'"),
        (rows) => count(rows) === 500,
        "10 seconds",
        "500 deliveries settled"
      )
      const reports = yield* Effect.all(workers.map((w) => w.stop))

      const received = yield* receiver.received
      const eventIds = received.map((r) => (JSON.parse(r.rawBody.toString("utf8")) as EventEnvelope).id)
      expect(received).toHaveLength(500)
      expect(new Set(eventIds)).toEqual(new Set(recorded.map((e) => e.id)))
      expect(received.every((r) => r.path === "/webhook" && /^t=\d+,v1=[0-9a-f]{64}$/.test(String(r.headers["service-signature"])))).toBe(true)

      const deliveries = yield* query<{ status: string; attempts: number; webhook_id: string }>("select status, attempts, webhook_id from deliveries")
      expect(deliveries.filter((d) => d.status !== "succeeded" || d.attempts !== 1 || d.webhook_id !== webhook.webhook.id)).toEqual([])
      const attempts = yield* query<{ event_id: string; attempt: number; outcome: string; status_code: number }>(
        "select event_id, attempt, outcome, status_code from delivery_attempts"
      )
      expect(attempts).toHaveLength(500)
      expect(new Set(attempts.map((a) => a.event_id)).size).toBe(500)
      expect(attempts.filter((a) => a.attempt !== 1 || a.outcome !== "succeeded" || a.status_code !== 200)).toEqual([])

      const sent = reports.map((r) => r.sent as number)
      console.log(`500 deliveries over two worker processes: ${sent.join(" + ")}`)
      expect(sent.reduce((a, b) => a + b, 0)).toBe(500)
      expect(sent.every((n) => n > 0)).toBe(true)
    }), 60_000)

  it.scopedLive("a worker killed with SIGKILL mid-proof: another takes the proof over once the lease lapses, and it completes once", () =>
    Effect.gen(function*() {
      const { core, principal, query, url } = yield* setUp
      // A proves for two minutes; its claim holds for the 30 s timeout (no margin), and it dies long
      // before. 30 s leave worker B's start (a node process: seconds on a loaded machine) inside it.
      const a = yield* startProofWorker(url, { proveMs: 120_000, timeoutMs: 30_000, leaseMarginMs: 0, pollIntervalMs: 200 })
      yield* a.ready
      const created = yield* Effect.flatMap(Proofs, (p) => p.create(principal.account_id, { type: "multiplier", inputs: { a: "3", b: "5" } }))
        .pipe(Effect.provide(core))
      const id = created.proof_id

      type Row = { status: string; attempts: number; lease_expires_at: string | null; started_at: string | null; proof_blob: string | null }
      const proof = query<Row>("select status, attempts, lease_expires_at, started_at, proof_blob from proofs where id = $1", [id])
        .pipe(Effect.map((rows) => rows[0]!))
      const claimed = yield* eventually(proof, (p) => p.status === "running", "20 seconds", "worker A claimed the proof")
      expect(claimed.attempts).toBe(1)
      const leaseA = Date.parse(claimed.lease_expires_at!)

      expect(yield* a.kill).toBe("SIGKILL")
      // Nobody settled it: the dead worker's claim is all that is left.
      expect(yield* proof).toMatchObject({ status: "running", attempts: 1, lease_expires_at: claimed.lease_expires_at })

      const b = yield* startProofWorker(url, { proveMs: 20, timeoutMs: 10_000, leaseMarginMs: 5_000, pollIntervalMs: 200 })
      yield* b.ready
      // Otherwise the test could not tell a takeover at the lease's end from one before it.
      expect(Date.now(), "worker B must be running before A's lease lapses").toBeLessThan(leaseA)
      const done = yield* eventually(proof, (p) => p.status !== "running", "50 seconds", "worker B settled the proof")
      const report = yield* b.stop

      expect(done.status).toBe("completed")
      expect(done.attempts).toBe(2)
      expect(done.proof_blob).not.toBeNull()
      // B claimed it only once A's lease had lapsed.
      expect(Date.parse(done.started_at!)).toBeGreaterThanOrEqual(leaseA)
      expect(report.proved).toBe(1)
      const events = yield* query<{ type: string; data: string }>("select type, data from events")
      expect(events.map((e) => [e.type, (JSON.parse(e.data) as { proof_id: string }).proof_id])).toEqual([["proof.completed", id]])
    }), 120_000)

  it.scopedLive("a worker killed with SIGKILL mid-delivery: another sends it again (same event id) once the lease lapses, recorded once", () =>
    Effect.gen(function*() {
      const { account, core, query, url } = yield* setUp
      // The first request never gets an answer: worker A dies waiting for it.
      const receiver = yield* startWebhookReceiver({ host: "127.0.0.1", reply: (_, n) => (n === 1 ? { hang: true } : {}) })
      yield* Effect.flatMap(Webhooks, (w) => w.create(account, { url: receiver.url, events: ["key.revoked"] })).pipe(Effect.provide(core))
      // A's lease leaves worker B's start (a node process: seconds on a loaded machine) well inside it.
      const a = yield* startDeliveryWorker(url, { timeoutMs: 28_000, leaseMs: 30_000, pollIntervalMs: 200 })
      yield* a.ready
      const [event] = yield* recordEvents(core, account, 1)

      yield* receiver.waitFor(1).pipe(Effect.timeoutFail({ duration: "20 seconds", onTimeout: () => "A sent nothing" }), Effect.orDie)
      const [held] = yield* query<{ lease_expires_at: string | null; status: string }>("select lease_expires_at, status from deliveries")
      expect(held).toMatchObject({ status: "pending" })
      const leaseA = Date.parse(held!.lease_expires_at!)
      expect(yield* a.kill).toBe("SIGKILL")

      const b = yield* startDeliveryWorker(url, { timeoutMs: 5_000, leaseMs: 30_000, pollIntervalMs: 200 })
      yield* b.ready
      expect(Date.now(), "worker B must be running before A's lease lapses").toBeLessThan(leaseA)
      yield* receiver.waitFor(2).pipe(Effect.timeoutFail({ duration: "50 seconds", onTimeout: () => "B sent nothing" }), Effect.orDie)
      type Row = { status: string; attempts: number }
      const [delivery] = yield* eventually(
        query<Row>("select status, attempts from deliveries"),
        (rows) => rows[0]?.status !== "pending",
        "10 seconds",
        "worker B recorded the delivery"
      )
      const report = yield* b.stop

      expect(delivery).toEqual({ status: "succeeded", attempts: 1 })
      const received = yield* receiver.received
      // At-least-once: the event came twice, with the same id, the second time after A's lease.
      expect(received.map((r) => (JSON.parse(r.rawBody.toString("utf8")) as EventEnvelope).id)).toEqual([event!.id, event!.id])
      expect(received[1]!.receivedAtMs).toBeGreaterThanOrEqual(leaseA)
      expect(report.sent).toBe(1)
      const attempts = yield* query<{ attempt: number; outcome: string; attempted_at: string }>(
        "select attempt, outcome, attempted_at from delivery_attempts"
      )
      expect(attempts.map((x) => [x.attempt, x.outcome])).toEqual([[1, "succeeded"]])
      expect(Date.parse(attempts[0]!.attempted_at)).toBeGreaterThanOrEqual(leaseA)
    }), 120_000)
})
