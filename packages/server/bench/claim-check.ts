/**
 * What the proof worker's claim check costs (not a test). While a worker proves, it asks storage
 * every `claimCheckIntervalMs` (1 s) which of its claims it has lost (`ProofsRepo.lostClaims`: one
 * read by primary key), so a proof canceled by another process stops even without a NOTIFY. This
 * times that read against a proofs table of realistic size, on SQLite (a temporary file) and on
 * PostgreSQL (a fresh database on 127.0.0.1:5432, dropped after; skipped when unreachable):
 *
 *   pnpm bench packages/server/bench/claim-check.ts [proofs=200000] [claims=16] [rounds=2000]
 *
 * `claims` is what one worker holds at once (its prover threads). It also times the cancel of a
 * running proof (one transaction: the conditional update, the quota refund, the event), 50 of them.
 * `--smoke` (CI's check that the bench runs, scripts/test/benchSmoke.test.ts): 500 proofs, 2 claims,
 * 5 rounds, 2 cancels, and PostgreSQL must be reachable.
 */
import { PostgresStore } from "@mzk/adapters-postgres"
import { freshDatabaseUrl } from "@mzk/adapters-postgres/testing"
import { SqliteStore } from "@mzk/adapters-sqlite"
import { Accounts, type AccountId, makeId, type ProofRecord, Proofs, ProofsRepo, type Storage, type Timestamp } from "@mzk/core"
import { testCore } from "@mzk/testkit"
import { Effect, Layer, Logger, LogLevel } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { performance } from "node:perf_hooks"

const SMOKE = process.argv.includes("--smoke")
const PROOFS = SMOKE ? 500 : Number(process.argv[2] ?? 200_000)
const CLAIMS = SMOKE ? 2 : Number(process.argv[3] ?? 16)
const ROUNDS = SMOKE ? 5 : Number(process.argv[4] ?? 2000)
const INSERT_BATCH = 500
const CANCELS = SMOKE ? 2 : 50

const percentile = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!
const stats = (samples: Array<number>) => {
  samples.sort((a, b) => a - b)
  const mean = samples.reduce((a, b) => a + b, 0) / samples.length
  return `mean ${mean.toFixed(0)} µs, p50 ${percentile(samples, 50).toFixed(0)} µs, p99 ${percentile(samples, 99).toFixed(0)} µs`
}

/** `n` settled proofs of many accounts, as a busy database holds them, then `CLAIMS` running ones of one account. */
const fill = Effect.gen(function*() {
  const repo = yield* ProofsRepo
  const accounts: Array<AccountId> = []
  for (let i = 0; i < 50; i++) accounts.push((yield* (yield* Accounts).create({ name: `bench-${i}` })).id)
  const at = "2030-01-01T00:00:00.000Z" as Timestamp
  const row = (account: AccountId, status: ProofRecord["status"]) =>
    Effect.map(makeId("proof"), (id): ProofRecord => ({
      id, account_id: account, batch_id: null, type: "multiplier", circuit: "multiplier", circuit_id: null, circuit_version: 1, proving_system: "groth16", status,
      inputs: status === "completed" ? null : { a: "3", b: "11" }, public_inputs: { c: "33" },
      proof_blob: status === "completed" ? "eyJwaV9hIjpbXX0=" : null, error: null, duration_ms: status === "completed" ? 100 : null, proving_ms: null, priority: "normal", deadline_at: null,
      attempts: status === "completed" ? 1 : 0, lease_expires_at: null, created_at: at, started_at: null,
      completed_at: status === "completed" ? at : null, finished_at: status === "completed" ? at : null, canceled_at: null, expires_at: null, metadata: {}
    }))
  for (let done = 0; done < PROOFS; done += INSERT_BATCH) {
    const batch = yield* Effect.all(Array.from({ length: Math.min(INSERT_BATCH, PROOFS - done) }, (_, i) => row(accounts[(done + i) % accounts.length]!, "completed")))
    yield* repo.insertMany(batch)
  }
  const mine = accounts[0]!
  yield* repo.insertMany(yield* Effect.all(Array.from({ length: CLAIMS + CANCELS }, () => row(mine, "queued"))))
  const claimed = yield* repo.claimNext({ now: at, leaseUntil: "2999-01-01T00:00:00.000Z" as Timestamp, maxRunningPerAccount: 1000, limit: CLAIMS + CANCELS })
  return { account: mine, claimed }
})

const measure = (name: string, store: Layer.Layer<Storage, unknown>) =>
  Effect.gen(function*() {
    const started = performance.now()
    const { account, claimed } = yield* fill
    console.log(`${name}: ${PROOFS} proofs written in ${((performance.now() - started) / 1000).toFixed(1)} s`)
    const repo = yield* ProofsRepo
    const held = claimed.slice(0, CLAIMS).map((r) => ({ id: r.id, attempts: r.attempts }))
    for (let i = 0; i < 100; i++) yield* repo.lostClaims(held)
    const samples: Array<number> = []
    const cpuBefore = process.cpuUsage()
    for (let i = 0; i < ROUNDS; i++) {
      const t = performance.now()
      const lost = yield* repo.lostClaims(held)
      samples.push((performance.now() - t) * 1000)
      if (lost.length !== 0) throw new Error("a held claim was reported lost")
    }
    const cpu = process.cpuUsage(cpuBefore)
    console.log(`${name}: lostClaims of ${CLAIMS} claims: ${stats(samples)}; this process's CPU ${((cpu.user + cpu.system) / ROUNDS).toFixed(0)} µs a check`)
    const cancels: Array<number> = []
    for (const proof of claimed.slice(CLAIMS)) {
      const t = performance.now()
      yield* (yield* Proofs).cancel(account, proof.id)
      cancels.push((performance.now() - t) * 1000)
    }
    console.log(`${name}: cancel of a running proof (update, refund, event, one transaction): ${stats(cancels)}`)
  }).pipe(Effect.provide(testCore(store)), Logger.withMinimumLogLevel(LogLevel.Warning))

const dir = mkdtempSync(join(tmpdir(), "mzk-claim-check-"))
await Effect.runPromise(measure("sqlite", SqliteStore({ filename: join(dir, "bench.db") }))).finally(() => rmSync(dir, { recursive: true, force: true }))
await Effect.runPromise(Effect.scoped(Effect.flatMap(freshDatabaseUrl, ({ url }) => measure("postgres", PostgresStore({ connectionString: url }))))).catch(
  (error: unknown) => {
    // A smoke run (CI, where PostgreSQL runs) must fail when this side cannot run.
    if (SMOKE) throw error
    console.log(`postgres: skipped (${error instanceof Error ? error.message : String(error)})`)
  }
)
