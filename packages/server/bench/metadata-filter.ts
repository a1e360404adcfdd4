/**
 * What the proofs list's metadata filter costs (not a test): `GET /proofs?metadata[order]=…`'s
 * storage read (one page of 20 and the filtered total), one account holding `own` proofs, each with
 * three metadata keys and a unique `order`, beside `others` proofs of other accounts, on SQLite (a
 * temporary file: `json_extract` over the account's proofs) and PostgreSQL (a fresh database on
 * 127.0.0.1:5432, dropped after: `(metadata::jsonb) @>` with the GIN index of migration 0017):
 *
 *   pnpm bench packages/server/bench/metadata-filter.ts [own=20000] [others=80000] [rounds=200]
 *
 * `own` is a multiple of 500 (500 customers). `--smoke` (CI's check that the bench runs,
 * scripts/test/benchSmoke.test.ts): 500 own, 100 others, one round, and PostgreSQL must be reachable.
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
const OWN = SMOKE ? 500 : Number(process.argv[2] ?? 20_000)
const OTHERS = SMOKE ? 100 : Number(process.argv[3] ?? 80_000)
const ROUNDS = SMOKE ? 1 : Number(process.argv[4] ?? 200)
if (OWN % 500 !== 0) throw new Error(`own must be a multiple of 500 (the customers), got ${OWN}`)
const INSERT_BATCH = 500
const AT = "2030-01-01T00:00:00.000Z" as Timestamp

const stats = (samples: Array<number>) => {
  samples.sort((a, b) => a - b)
  const at = (p: number) => samples[Math.min(samples.length - 1, Math.ceil((p / 100) * samples.length) - 1)]!
  const mean = samples.reduce((a, b) => a + b, 0) / samples.length
  return `mean ${mean.toFixed(2)} ms, p50 ${at(50).toFixed(2)} ms, p99 ${at(99).toFixed(2)} ms`
}

const row = (account: AccountId, i: number) =>
  Effect.map(makeId("proof"), (id): ProofRecord => ({
    id, account_id: account, batch_id: null, type: "multiplier", circuit: "multiplier", circuit_id: null, circuit_version: 1, proving_system: "groth16", status: "completed",
    inputs: null, public_inputs: { c: "33" }, proof_blob: "eyJwaV9hIjpbXX0=", error: null, duration_ms: 100, attempts: 1,
    lease_expires_at: null, created_at: AT, started_at: AT, completed_at: AT, finished_at: AT, canceled_at: null, expires_at: null,
    proving_ms: 90, priority: "normal", deadline_at: null,
    metadata: { order: `ord_${i}`, customer: `cus_${i % 500}`, tier: i % 2 === 0 ? "gold" : "silver" }
  }))

const insert = (count: number, make: (i: number) => ReturnType<typeof row>) =>
  Effect.gen(function*() {
    for (let done = 0; done < count; done += INSERT_BATCH) {
      yield* (yield* ProofsRepo).insertMany(yield* Effect.all(Array.from({ length: Math.min(INSERT_BATCH, count - done) }, (_, i) => make(done + i))))
    }
  })

const measure = (name: string, store: Layer.Layer<Storage, unknown>) =>
  Effect.gen(function*() {
    const own = (yield* (yield* Accounts).create({ name: "bench-own" })).id
    const other = (yield* (yield* Accounts).create({ name: "bench-other" })).id
    yield* insert(OTHERS, (i) => row(other, i))
    yield* insert(OWN, (i) => row(own, i))
    const repo = yield* ProofsRepo
    const time = (what: string, metadata: Record<string, string> | undefined, expect: number) =>
      Effect.gen(function*() {
        const samples: Array<number> = []
        for (let i = 0; i < ROUNDS + 20; i++) {
          const t = performance.now()
          const page = yield* repo.list(own, { limit: 20, metadata: metadata === undefined ? undefined : { ...metadata, ...(metadata.order === "*" ? { order: `ord_${i % OWN}` } : {}) } })
          if (i >= 20) samples.push(performance.now() - t)
          if (page.total !== expect) throw new Error(`${what}: total ${page.total}, expected ${expect}`)
        }
        console.log(`${name}: ${what}: ${stats(samples)}`)
      })
    yield* time("no filter (page + total)", undefined, OWN)
    yield* time("metadata[order]=<one proof's>", { order: "*" }, 1)
    yield* time("metadata[customer]=cus_7&metadata[tier]=silver", { customer: "cus_7", tier: "silver" }, OWN / 500)
  }).pipe(Effect.provide(testCore(store)), Logger.withMinimumLogLevel(LogLevel.Warning))

console.log(`one account with ${OWN} proofs, ${OTHERS} of another account; ${ROUNDS} rounds each`)
const dir = mkdtempSync(join(tmpdir(), "mzk-metadata-filter-"))
await Effect.runPromise(measure("sqlite", SqliteStore({ filename: join(dir, "bench.db") }))).finally(() => rmSync(dir, { recursive: true, force: true }))
await Effect.runPromise(Effect.scoped(Effect.flatMap(freshDatabaseUrl, ({ url }) => measure("postgres", PostgresStore({ connectionString: url }))))).catch(
  (error: unknown) => {
    // A smoke run (CI, where PostgreSQL runs) must fail when this side cannot run.
    if (SMOKE) throw error
    console.log(`postgres: skipped (${error instanceof Error ? error.message : String(error)})`)
  }
)
