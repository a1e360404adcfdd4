import { expect, it } from "@effect/vitest"
import { eventually, FakeProver } from "@mzk/testkit"
import { Effect } from "effect"
import { describe } from "vitest"
import { serverWithKey, STORES } from "../bothStores.js"

/**
 * The proof record's timeline over a real port, on SQLite and on Postgres: `duration_ms` is
 * exactly `finished_at − started_at`; `completed_at` only for a completed proof, `finished_at` for
 * every settled one; a proof whose deadline passed before a worker claimed it was never started,
 * and its record says so. Nothing here asserts wall time: only how the record's times relate.
 */

/** Held running an hour by the fake prover (b = 7): the account's one slot stays taken while the test looks. */
const LONG = { type: "multiplier", inputs: { a: 3, b: 7 } }
const QUICK = { type: "multiplier", inputs: { a: 3, b: 11 } }
/** Fails: a factor of 1 violates the multiplier circuit's constraint. */
const FAILING = { type: "multiplier", inputs: { a: 1, b: 5 } }

const until = <A>(what: string, probe: () => Effect.Effect<A | undefined>, withinMs = 15_000) =>
  Effect.promise(() => eventually(() => Effect.runPromise(probe()), withinMs).catch(() => Promise.reject(new Error(`${what}: not within ${withinMs} ms`))))

const span = (p: { started_at: string; finished_at: string }) => Date.parse(p.finished_at) - Date.parse(p.started_at)

describe.each(STORES)("the proof timeline on %s", (_name, database) => {
  it.scopedLive("duration_ms = finished_at − started_at exactly; completed_at only when completed; a proof claimed past its deadline never started", () =>
    Effect.gen(function*() {
      const { call } = yield* serverWithKey(database, {
        workers: true,
        prover: FakeProver({ capacity: 4, duration: ({ inputs }) => (inputs.b === "7" ? "1 hour" : "30 millis") }),
        limits: { maxRunningProofsPerAccount: 1 },
        // The deadline sweep runs at start and then hourly: the worker's claim reaches the late proof first.
        proofs: { pollIntervalMs: 3_600_000 }
      })
      const get = (id: string) => Effect.map(call("GET", `/api/v1/proofs/${id}`), (reply) => reply.json)
      const settled = (id: string) =>
        until(`proof ${id} settled`, () => Effect.map(get(id), (p) => (p.status === "completed" || p.status === "failed" ? p : undefined)))

      const long = yield* call("POST", "/api/v1/proofs", LONG)
      yield* until("the long proof running", () => Effect.map(get(long.json.proof_id), (p) => (p.status === "running" ? p : undefined)))
      const late = yield* call("POST", "/api/v1/proofs", { ...QUICK, timeout_ms: 200 })
      const quick = yield* call("POST", "/api/v1/proofs", QUICK)
      const failing = yield* call("POST", "/api/v1/proofs", FAILING)
      expect([late.status, quick.status, failing.status]).toEqual([202, 202, 202])
      // Its deadline passes while it waits behind the long proof.
      const deadline = Date.parse(late.json.deadline_at)
      yield* until("the late proof's deadline passed", () => Effect.succeed(Date.now() > deadline + 50 ? true : undefined))
      expect((yield* get(late.json.proof_id)).status).toBe("queued")

      // The slot frees: the worker claims the late proof, past its deadline, then the others.
      expect((yield* call("POST", `/api/v1/proofs/${long.json.proof_id}/cancel`)).status).toBe(200)
      const overdue = yield* settled(late.json.proof_id)
      expect(overdue).toMatchObject({
        status: "failed",
        error: { code: "timeout" },
        started_at: null,
        completed_at: null,
        duration_ms: 0,
        proving_ms: null
      })
      expect(overdue.error.message).toMatch(/never started/)
      expect(Date.parse(overdue.finished_at)).toBeGreaterThan(deadline)

      const done = yield* settled(quick.json.proof_id)
      expect(done.status).toBe("completed")
      expect(done.completed_at).toBe(done.finished_at)
      expect(done.duration_ms).toBe(span(done))
      expect(done.proving_ms).toBeLessThanOrEqual(done.duration_ms)

      const failed = yield* settled(failing.json.proof_id)
      expect(failed).toMatchObject({ status: "failed", error: { code: "constraint_violation" }, completed_at: null })
      expect(failed.duration_ms).toBe(span(failed))
      expect(Date.parse(failed.started_at)).toBeGreaterThanOrEqual(Date.parse(failed.queued_at))

      // The canceled proof ran, and finished when it was canceled.
      const canceled = yield* get(long.json.proof_id)
      expect(canceled).toMatchObject({ status: "canceled", completed_at: null, duration_ms: null })
      expect(canceled.started_at).not.toBeNull()
      expect(canceled.finished_at).toBe(canceled.canceled_at)

      // The list shows the same records, and /usage sums exactly the settled proofs' durations.
      const listed = (yield* call("GET", "/api/v1/proofs?limit=10")).json.proofs as Array<any>
      for (const p of [overdue, done, failed, canceled]) expect(listed.find((l) => l.proof_id === p.proof_id)).toEqual(p)
      const usage = (yield* call("GET", "/api/v1/usage")).json
      expect(usage.proving_seconds.today).toBe((done.duration_ms + failed.duration_ms) / 1000)
    }), 60_000)
})
