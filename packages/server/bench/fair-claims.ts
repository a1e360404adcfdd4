/**
 * What a proof claim costs now that it takes turns across accounts (not a test). A claim reads the
 * oldest queued proof of every account with queued proofs (a loose index scan over `proofs_queue_by_priority`:
 * one probe per account, not one row per queued proof), the running counts, and the oldest of the
 * accounts it picks. This times a one-proof claim (a prover thread freed) and its hand-back, with
 * one account holding `queued` proofs, `accounts` other accounts one each, over `settled` settled
 * proofs, and the queue position of that account's last queued proof, on SQLite (a temporary file) and PostgreSQL (a fresh database on 127.0.0.1:5432, dropped
 * after; skipped when unreachable):
 *
 *   pnpm bench packages/server/bench/fair-claims.ts [queued=1000] [accounts=50] [settled=50000] [rounds=1000]
 *
 * `--smoke` (CI's check that the bench runs, scripts/test/benchSmoke.test.ts): 5 queued, 3 accounts,
 * 10 settled, one round, and PostgreSQL must be reachable.
 */
import { PostgresStore } from "@mzk/adapters-postgres"
import { freshDatabaseUrl } from "@mzk/adapters-postgres/testing"
import { SqliteStore } from "@mzk/adapters-sqlite"
import { Accounts, type AccountId, makeId, type ProofRecord, ProofsRepo, type Storage, type Timestamp } from "@mzk/core"
import { testCore } from "@mzk/testkit"
import { Effect, type Layer, Logger, LogLevel } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { performance } from "node:perf_hooks"

const SMOKE = process.argv.includes("--smoke")
const QUEUED = SMOKE ? 5 : Number(process.argv[2] ?? 1_000)
const ACCOUNTS = SMOKE ? 3 : Number(process.argv[3] ?? 50)
const SETTLED = SMOKE ? 10 : Number(process.argv[4] ?? 50_000)
const ROUNDS = SMOKE ? 1 : Number(process.argv[5] ?? 1_000)
const INSERT_BATCH = 500
const AT = "2030-01-01T00:00:00.000Z" as Timestamp

const percentile = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!
const stats = (samples: Array<number>) => {
  samples.sort((a, b) => a - b)
  const mean = samples.reduce((a, b) => a + b, 0) / samples.length
  return `mean ${mean.toFixed(0)} µs, p50 ${percentile(samples, 50).toFixed(0)} µs, p99 ${percentile(samples, 99).toFixed(0)} µs`
}

const row = (account: AccountId, status: ProofRecord["status"]) =>
  Effect.map(makeId("proof"), (id): ProofRecord => ({
    id, account_id: account, batch_id: null, type: "multiplier", circuit: "multiplier", circuit_id: null, circuit_version: 1, proving_system: "groth16", status,
    inputs: status === "completed" ? null : { a: "3", b: "11" }, public_inputs: { c: "33" },
    proof_blob: status === "completed" ? "eyJwaV9hIjpbXX0=" : null, error: null, duration_ms: status === "completed" ? 100 : null, proving_ms: null, priority: "normal", deadline_at: null,
    attempts: status === "completed" ? 1 : 0, lease_expires_at: null, created_at: AT, started_at: null,
    completed_at: status === "completed" ? AT : null, finished_at: status === "completed" ? AT : null, canceled_at: null, expires_at: null, metadata: {}
  }))

const insert = (count: number, make: (i: number) => ReturnType<typeof row>) =>
  Effect.gen(function*() {
    const ids: Array<ProofRecord["id"]> = []
    for (let done = 0; done < count; done += INSERT_BATCH) {
      const rows = yield* Effect.all(Array.from({ length: Math.min(INSERT_BATCH, count - done) }, (_, i) => make(done + i)))
      yield* (yield* ProofsRepo).insertMany(rows)
      ids.push(...rows.map((r) => r.id))
    }
    return ids
  })

const measure = (name: string, store: Layer.Layer<Storage, unknown>) =>
  Effect.gen(function*() {
    const accounts: Array<AccountId> = []
    for (let i = 0; i <= ACCOUNTS; i++) accounts.push((yield* (yield* Accounts).create({ name: `bench-${i}` })).id)
    const [busy, ...others] = accounts as [AccountId, ...Array<AccountId>]
    yield* insert(SETTLED, (i) => row(accounts[i % accounts.length]!, "completed"))
    const busyQueue = yield* insert(QUEUED, () => row(busy, "queued"))
    yield* insert(others.length, (i) => row(others[i]!, "queued"))
    const repo = yield* ProofsRepo
    const claimOne = repo.claimNext({ now: AT, leaseUntil: "2999-01-01T00:00:00.000Z" as Timestamp, maxRunningPerAccount: 10, limit: 1 })
    const samples: Array<number> = []
    for (let i = 0; i < ROUNDS + 50; i++) {
      const t = performance.now()
      const [claimed] = yield* claimOne
      if (i >= 50) samples.push((performance.now() - t) * 1000)
      if (claimed === undefined) throw new Error("nothing claimed")
      yield* repo.release(claimed.id, claimed.attempts)
    }
    console.log(`${name}: one-proof claim, ${QUEUED} queued of one account + ${others.length} accounts with one, over ${SETTLED} settled: ${stats(samples)}`)
    // The queue position of the account's last queued proof (what a create or get of it reads): a
    // count over the index range before it, so the deepest proof is the dearest.
    const last = busyQueue[busyQueue.length - 1]!
    const positions: Array<number> = []
    for (let i = 0; i < ROUNDS + 50; i++) {
      const t = performance.now()
      const position = (yield* repo.queuePositions(busy, [last])).get(last)
      if (i >= 50) positions.push((performance.now() - t) * 1000)
      if (position !== QUEUED) throw new Error(`position ${position}, expected ${QUEUED}`)
    }
    console.log(`${name}: queue position of the ${QUEUED}th queued proof of an account: ${stats(positions)}`)
  }).pipe(Effect.provide(testCore(store)), Logger.withMinimumLogLevel(LogLevel.Warning))

const dir = mkdtempSync(join(tmpdir(), "mzk-fair-claims-"))
await Effect.runPromise(measure("sqlite", SqliteStore({ filename: join(dir, "bench.db") }))).finally(() => rmSync(dir, { recursive: true, force: true }))
await Effect.runPromise(Effect.scoped(Effect.flatMap(freshDatabaseUrl, ({ url }) => measure("postgres", PostgresStore({ connectionString: url }))))).catch(
  (error: unknown) => {
    // A smoke run (CI, where PostgreSQL runs) must fail when this side cannot run.
    if (SMOKE) throw error
    console.log(`postgres: skipped (${error instanceof Error ? error.message : String(error)})`)
  }
)
