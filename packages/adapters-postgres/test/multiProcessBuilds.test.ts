import { PostgresStore } from "@mzk/adapters-postgres"
import { Accounts, Circuits, CircuitsConfig, DEFAULT_CIRCUITS_CONFIG } from "@mzk/core"
import { testCore } from "@mzk/testkit"
import { expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import type { CircuitWorkerOptions } from "./fixtures/circuitWorker.js"
import { describePostgres, freshDatabaseUrl } from "./freshDatabase.js"
import { eventually, fixture, spawnWorker, sqlClient } from "./workerProcesses.js"

const circuitWorker = fixture("circuitWorker.ts")
const startCircuitWorker = (url: string, options: CircuitWorkerOptions) => spawnWorker(circuitWorker, [url, JSON.stringify(options)])

const FAST: CircuitWorkerOptions = { buildMs: 50, buildTimeoutMs: 10_000, leaseMarginMs: 5_000, pollIntervalMs: 200, buildConcurrency: 2 }

/** A fresh database migrated by this (parent) process, its core services (no loops: the children build), and one account. */
const setUp = Effect.gen(function*() {
  const { url } = yield* freshDatabaseUrl
  const core = yield* Layer.build(
    testCore(PostgresStore({ connectionString: url, poolSize: 5 }), { seed: "parent" }).pipe(
      Layer.provide(Layer.succeed(CircuitsConfig, { ...DEFAULT_CIRCUITS_CONFIG, maxCompilingPerAccount: 100 }))
    )
  )
  const account = yield* Effect.flatMap(Accounts, (a) => a.create({ name: "Shared" })).pipe(Effect.provide(core))
  const upload = (name: string) =>
    Effect.flatMap(Circuits, (c) =>
      c.create(account.id, {
        name,
        source: { kind: "circom", main: "main.circom", files: { "main.circom": new TextEncoder().encode(`// ${name}\nsignal input a;\ncomponent main = T();`) } }
      })).pipe(Effect.provide(core))
  return { url, upload, query: yield* sqlClient(url) }
})

describePostgres("Postgres circuit builds across processes", () => {
  it.scopedLive("two worker processes build 16 uploads: each is built exactly once, and both built some", () =>
    Effect.gen(function*() {
      const { query, upload, url } = yield* setUp
      const workers = yield* Effect.all([startCircuitWorker(url, FAST), startCircuitWorker(url, FAST)])
      yield* Effect.all(workers.map((w) => w.ready), { concurrency: "unbounded" })
      const names = Array.from({ length: 16 }, (_, i) => `c${i}`)
      yield* Effect.forEach(names, upload, { concurrency: 4 })

      yield* eventually(
        query<{ n: number }>("select count(*)::int as n from circuits where status <> 'compiling'"),
        (rows) => rows[0]?.n === 16,
        "30 seconds",
        "16 circuits built"
      )
      const reports = yield* Effect.all(workers.map((w) => w.stop))
      const rows = yield* query<{ name: string; status: string; attempts: number }>("select name, status, attempts from circuits order by name")
      expect(rows.filter((r) => r.status !== "ready" || r.attempts !== 1)).toEqual([])
      const events = yield* query<{ type: string; data: string }>("select type, data from events")
      expect(events.every((e) => e.type === "circuit.ready")).toBe(true)
      expect(events.map((e) => (JSON.parse(e.data) as { name: string }).name).sort()).toEqual([...names].sort())
      const built = reports.map((r) => r.built as number)
      console.log(`16 builds over two worker processes: ${built.join(" + ")}`)
      expect(built.reduce((a, b) => a + b, 0)).toBe(16)
      expect(built.every((n) => n > 0)).toBe(true)
    }), 60_000)

  it.scopedLive("a worker killed with SIGKILL mid-build: another takes the build over once the lease lapses, and it is ready once", () =>
    Effect.gen(function*() {
      const { query, upload, url } = yield* setUp
      // A builds for two minutes; its claim holds for its 30 s time limit (no margin), and it dies
      // long before. The lease leaves B time to start while another suite loads the machine.
      const a = yield* startCircuitWorker(url, { ...FAST, buildMs: 120_000, buildTimeoutMs: 30_000, leaseMarginMs: 0 })
      yield* a.ready
      yield* upload("killed")
      type Row = { status: string; attempts: number; lease_expires_at: string | null; artifacts: string | null; updated_at: string }
      const circuit = query<Row>("select status, attempts, lease_expires_at, artifacts, updated_at from circuits where name = 'killed'")
        .pipe(Effect.map((rows) => rows[0]!))
      const claimed = yield* eventually(circuit, (c) => c.attempts === 1, "20 seconds", "worker A claimed the build")
      expect(yield* a.kill).toBe("SIGKILL")
      const leaseA = Date.parse(claimed.lease_expires_at!)
      expect(yield* circuit).toMatchObject({ status: "compiling", attempts: 1 })

      const b = yield* startCircuitWorker(url, FAST)
      yield* b.ready
      expect(Date.now(), "worker B must be running before A's lease lapses").toBeLessThan(leaseA)
      const done = yield* eventually(circuit, (c) => c.status !== "compiling", "2 minutes", "worker B built the circuit")
      const report = yield* b.stop
      // B built it only once A's lease had lapsed.
      expect(Date.parse(done.updated_at)).toBeGreaterThanOrEqual(leaseA)
      expect([done.status, done.attempts]).toEqual(["ready", 2])
      expect(done.artifacts).not.toBeNull()
      expect(report.built).toBe(1)
      const events = yield* query<{ type: string }>("select type from events")
      expect(events.map((e) => e.type)).toEqual(["circuit.ready"])
    }), 240_000)
})
