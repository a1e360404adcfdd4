import { expect, it } from "@effect/vitest"
import { type AccountId, Accounts, ApiKeys } from "@mzk/core"
import { eventually, FakeProver, makeHttpClient } from "@mzk/testkit"
import { Effect, Redacted } from "effect"
import { describe } from "vitest"
import { expectRefused, type Reply, STORES } from "../bothStores.js"
import { startServer } from "../realServer.js"

/**
 * Scheduling a user can steer, and the usage report, over a real port on
 * SQLite and on Postgres: priority within an account, a deadline that passes while queued, the
 * record's times and queue position, `GET /usage` after a known set of proofs (the client's
 * `usage.get()` too), and the requests refused. The deadline's exact moments are TestClock tests
 * in core (proofScheduling.test.ts); nothing here asserts wall time.
 */

/** Held running an hour by the fake prover: the account's one slot stays taken while a test looks. */
const LONG = { type: "multiplier", inputs: { a: 3, b: 7 } }
const quick = (b: number, extra: Record<string, unknown> = {}) => ({ type: "multiplier", inputs: { a: 3, b }, ...extra })
/** Fails at once: a factor of 1 violates the multiplier circuit's constraint. */
const FAILING = { type: "multiplier", inputs: { a: 1, b: 5 } }
const DAILY = 50

/** Fixed one-minute windows on the clock: start a minute-sized test well inside one. */
const awayFromMinuteBoundary = Effect.promise(async () => {
  const into = Date.now() % 60_000
  if (into > 40_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - into + 200))
})

const serverWithAccount = (database: Parameters<typeof startServer>[0] extends infer O ? O extends { database?: infer D } ? D : never : never) =>
  Effect.gen(function*() {
    const { baseUrl, context } = yield* startServer({
      database,
      workers: true,
      prover: FakeProver({ capacity: 8, duration: ({ inputs }) => (inputs.b === "7" ? "1 hour" : "20 millis") }),
      limits: { maxRunningProofsPerAccount: 1, proofsPerDayPerAccount: DAILY }
    })
    const { key, narrow } = yield* Effect.gen(function*() {
      const account = (yield* (yield* Accounts).create({ name: "Scheduling" })).id as AccountId
      const keys = yield* ApiKeys
      return {
        key: Redacted.value((yield* keys.create(account, { name: "all" })).secret),
        narrow: Redacted.value((yield* keys.create(account, { name: "writer", scopes: ["proofs:write"] })).secret)
      }
    }).pipe(Effect.provide(context))
    const as = (token: string) => {
      const client = makeHttpClient(baseUrl, { token })
      return (method: string, path: string, body?: unknown) =>
        Effect.promise(async (): Promise<Reply> => {
          const reply = await client.send(method, path, { body })
          return { status: reply.status, requestId: reply.headers.get("request-id"), json: reply.json }
        })
    }
    return { call: as(key), narrow: as(narrow) }
  })

const until = <A>(what: string, probe: () => Effect.Effect<A | undefined>) =>
  Effect.promise(() => eventually(() => Effect.runPromise(probe()), 15_000).catch(() => Promise.reject(new Error(`${what}: not within 15 s`))))

describe.each(STORES)("proof scheduling and usage on %s", (_name, database) => {
  it.scopedLive("priority orders the account's queue, a queued proof past its deadline fails, the times move, and /usage counts it all", () =>
    Effect.gen(function*() {
      yield* awayFromMinuteBoundary
      const { call } = yield* serverWithAccount(yield* database)
      const get = (id: string) => Effect.map(call("GET", `/api/v1/proofs/${id}`), (reply) => reply.json)

      const long = yield* call("POST", "/api/v1/proofs", LONG)
      expect(long.status).toBe(202)
      yield* until("the long proof running", () => Effect.map(get(long.json.proof_id), (p) => (p.status === "running" ? p : undefined)))

      const low = yield* call("POST", "/api/v1/proofs", quick(11, { priority: "low" }))
      const normal = yield* call("POST", "/api/v1/proofs", quick(12))
      const high = yield* call("POST", "/api/v1/proofs", quick(13, { priority: "high", timeout_ms: 60_000 }))
      const late = yield* call("POST", "/api/v1/proofs", quick(14, { priority: "high", timeout_ms: 300 }))
      expect([low, normal, high, late].map((r) => r.status)).toEqual([202, 202, 202, 202])
      expect(high.json).toMatchObject({ status: "queued", priority: "high", queue_position: 1, started_at: null, finished_at: null, proving_ms: null })
      expect(high.json.queued_at).toBe(high.json.created_at)
      expect(Date.parse(high.json.deadline_at) - Date.parse(high.json.created_at)).toBe(60_000)
      expect(low.json.deadline_at).toBeNull()

      // The deadline passes while the account's one slot is taken: failed as timeout, never started.
      const overdue = yield* until("the late proof failed", () =>
        Effect.map(get(late.json.proof_id), (p) => (p.status === "failed" ? p : undefined)))
      expect(overdue).toMatchObject({ error: { code: "timeout" }, started_at: null, duration_ms: 0, proving_ms: null, queue_position: null })
      // It failed: finished, never completed.
      expect(overdue.completed_at).toBeNull()
      expect(Date.parse(overdue.finished_at)).toBeGreaterThanOrEqual(Date.parse(overdue.deadline_at))

      // Read now, the queue is high, normal, low; the list says the same.
      const positions = yield* Effect.all([high, normal, low].map((r) => Effect.map(get(r.json.proof_id), (p) => p.queue_position)))
      expect(positions).toEqual([1, 2, 3])
      const listed = yield* call("GET", "/api/v1/proofs?status=queued")
      expect(listed.json.proofs.map((p: any) => [p.proof_id, p.queue_position])).toEqual(
        [[high.json.proof_id, 1], [normal.json.proof_id, 2], [low.json.proof_id, 3]]
      )

      // Cancel the long proof: the slot frees, and the queue drains in priority order.
      expect((yield* call("POST", `/api/v1/proofs/${long.json.proof_id}/cancel`)).status).toBe(200)
      const done = yield* until("the queue drained", () =>
        Effect.map(Effect.all([high, normal, low].map((r) => get(r.json.proof_id))), (ps) => (ps.every((p) => p.status === "completed") ? ps : undefined)))
      for (const p of done) {
        expect(p).toMatchObject({ queue_position: null })
        expect(p.finished_at).toBe(p.completed_at)
        expect(p.duration_ms).toBe(Date.parse(p.finished_at) - Date.parse(p.started_at))
        expect(p.proving_ms).toBeLessThanOrEqual(p.duration_ms)
        expect(Date.parse(p.queued_at)).toBeLessThanOrEqual(Date.parse(p.started_at))
        expect(Date.parse(p.started_at)).toBeLessThanOrEqual(Date.parse(p.finished_at))
      }
      const started = done.map((p) => p.started_at)
      expect([...started].sort()).toEqual(started)
      const failed = yield* call("POST", "/api/v1/proofs", FAILING)
      yield* until("the failing proof settled", () => Effect.map(get(failed.json.proof_id), (p) => (p.status === "failed" ? p : undefined)))
      const failedRecord = yield* get(failed.json.proof_id)

      const usage = yield* call("GET", "/api/v1/usage")
      expect(usage.status).toBe(200)
      // Six requests charged this key's minute; the day counts six proofs less the canceled one, refunded.
      expect(usage.json.rate_limits.per_minute).toMatchObject({ policy: "key", limit: 60, used: 6, remaining: 54, window_seconds: 60 })
      expect(usage.json.rate_limits.per_day).toMatchObject({ policy: "daily", limit: DAILY, used: 5, remaining: DAILY - 5, window_seconds: 86_400 })
      expect(Date.parse(usage.json.rate_limits.per_day.resets_at)).toBe(Date.parse(usage.json.day_start) + 86_400_000)
      expect(usage.json.proofs_today).toEqual({ queued: 0, running: 0, completed: 3, failed: 2, canceled: 1, expired: 0 })
      const settledMs = [...done, failedRecord, overdue].reduce((sum, p) => sum + p.duration_ms, 0)
      expect(usage.json.circuits).toEqual([
        { circuit: "multiplier", proofs_today: 5, proving_seconds_today: settledMs / 1000, proofs_this_month: 5, proving_seconds_this_month: settledMs / 1000 }
      ])
      expect(usage.json.proving_seconds).toEqual({ today: settledMs / 1000, this_month: settledMs / 1000 })

      // Reading it charged nothing. Only reset_seconds may move: it counts down on the wall clock.
      const charged = (limits: Record<string, Record<string, unknown>>) =>
        Object.fromEntries(Object.entries(limits).map(([name, { reset_seconds: _, ...window }]) => [name, window]))
      expect(charged((yield* call("GET", "/api/v1/usage")).json.rate_limits)).toEqual(charged(usage.json.rate_limits))
    }), 90_000)

  it.scopedLive("refused with 400 naming the field: a bad priority, timeout_ms not a positive integer or over the cap; /usage needs proofs:read", () =>
    Effect.gen(function*() {
      const { call, narrow } = yield* serverWithAccount(yield* database)
      expectRefused("priority", yield* call("POST", "/api/v1/proofs", quick(11, { priority: "urgent" })), "priority")
      for (const timeout of [0, -5, 1.5, "100"]) {
        expectRefused(`timeout_ms ${timeout}`, yield* call("POST", "/api/v1/proofs", quick(11, { timeout_ms: timeout })), "timeout_ms")
      }
      const over = yield* call("POST", "/api/v1/proofs", quick(11, { timeout_ms: 60_001 }))
      expectRefused("timeout_ms over the cap", over, "timeout_ms")
      expect(over.json.error.details).toEqual([{ path: "timeout_ms", message: "must be at most 60000 (this server's proof timeout), got 60001" }])
      const batch = yield* call("POST", "/api/v1/proofs/batch", { proofs: [quick(11), quick(12, { timeout_ms: 120_000 })] })
      expectRefused("a batch item over the cap", batch, "proofs.1.timeout_ms")
      expectRefused("a batch item's priority", yield* call("POST", "/api/v1/proofs/batch", { proofs: [quick(11, { priority: 2 })] }), "proofs.0.priority")
      // Nothing was queued or charged by any of them.
      const usage = yield* call("GET", "/api/v1/usage")
      expect(usage.json.rate_limits.per_day.used).toBe(0)
      expect(usage.json.proofs_today.queued).toBe(0)
      const forbidden = yield* narrow("GET", "/api/v1/usage")
      expect([forbidden.status, forbidden.json.error.code]).toEqual([403, "insufficient_scope"])
    }), 60_000)
})
