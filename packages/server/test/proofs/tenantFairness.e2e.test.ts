import { expect, it } from "@effect/vitest"
import { type AccountId, Accounts, ApiKeys, DEFAULT_LIMITS, DEFAULT_WEBHOOK_CONFIG } from "@mzk/core"
import { eventually, FakeProver, makeHttpClient, startWebhookReceiver } from "@mzk/testkit"
import { Effect, Fiber, Redacted } from "effect"
import { describe } from "vitest"
import { STORES } from "../bothStores.js"
import { startServer } from "../realServer.js"

/**
 * One tenant's load does not hold another tenant's work back: claims take turns
 * across accounts, and an account holds only its share of the delivery slots. Over real ports, on
 * SQLite and on Postgres; the two-process case is in adapters-postgres (fairnessProcesses.test.ts).
 * No wall-time bound is asserted beyond "before any of the hanging attempts could time out".
 */

const api = (baseUrl: string, key: string) => {
  const client = makeHttpClient(baseUrl, { token: key })
  return (method: string, path: string, body?: unknown) => client.send(method, path, { body })
}

/** Polls (real time) until `probe` gives a value, or fails after `ms`. */
const within = <A>(ms: number, what: string, probe: () => Promise<A | undefined>) =>
  Effect.promise(() => eventually(probe, ms).catch(() => Promise.reject(new Error(`${what}: not within ${ms} ms`))))

const serverWithAccounts = (options: Parameters<typeof startServer>[0]) =>
  Effect.gen(function*() {
    const { baseUrl, context } = yield* startServer(options)
    const account = (name: string) =>
      Effect.gen(function*() {
        const id = (yield* (yield* Accounts).create({ name })).id as AccountId
        return api(baseUrl, Redacted.value((yield* (yield* ApiKeys).create(id, { name: "bootstrap" })).secret))
      }).pipe(Effect.provide(context))
    return { busy: yield* account("Busy"), quiet: yield* account("Quiet") }
  })

describe.each(STORES)("tenant fairness on %s", (_name, database) => {
  it.scopedLive("an account whose 20 receivers all hang holds only its share of the slots: another account's event arrives before any of those attempts times out", () =>
    Effect.gen(function*() {
      // Paths under /hang accept the request and never answer; /ok answers 200 at once.
      const receiver = yield* startWebhookReceiver({ reply: (request) => (request.path.startsWith("/hang") ? { hang: true } : {}) })
      const origin = `http://127.0.0.1:${receiver.port}`
      const { busy, quiet } = yield* serverWithAccounts({ database: yield* database, workers: true, allowInsecureWebhooks: true, prover: FakeProver() })
      for (let i = 0; i < 20; i++) {
        const created = yield* Effect.promise(() => busy("POST", "/api/v1/webhooks", { url: `${origin}/hang/${i}`, events: ["key.created", "key.revoked"] }))
        expect(created.status).toBe(201)
      }
      const healthy = yield* Effect.promise(() => quiet("POST", "/api/v1/webhooks", { url: `${origin}/ok`, events: ["key.created"] }))
      expect(healthy.status).toBe(201)

      // Four keys created and revoked: 8 events to 20 webhooks, 160 deliveries that hang.
      for (let i = 0; i < 4; i++) {
        const key = yield* Effect.promise(() => busy("POST", "/api/v1/keys", { name: `k${i}` }))
        expect(key.status).toBe(201)
        expect((yield* Effect.promise(() => busy("DELETE", `/api/v1/keys/${key.json.id}`))).status).toBe(204)
      }
      const hanging = () => Effect.runPromise(Effect.map(receiver.received, (all) => all.filter((r) => r.path.startsWith("/hang"))))
      const share = DEFAULT_WEBHOOK_CONFIG.maxConcurrentPerAccount
      const busyFirst = yield* within(5_000, "the busy account's share of hanging attempts", async () => {
        const seen = await hanging()
        return seen.length >= share ? Math.min(...seen.map((r) => r.receivedAtMs)) : undefined
      })

      const sentAt = Date.now()
      expect((yield* Effect.promise(() => quiet("POST", "/api/v1/keys", { name: "q" }))).status).toBe(201)
      // Before the fix every slot held a hanging attempt, and this waited for two 10 s timeouts.
      const arrived = yield* within(15_000, "the quiet account's delivery", async () =>
        (await Effect.runPromise(receiver.received)).find((r) => r.path === "/ok"))
      console.log(`the quiet account's event arrived ${arrived.receivedAtMs - sentAt} ms after its key was created`)
      expect(arrived.receivedAtMs - busyFirst).toBeLessThan(DEFAULT_WEBHOOK_CONFIG.timeoutMs)
      // No attempt of the busy account has ended yet (none can before its timeout), so what its
      // receivers got is what it holds: its share, not every slot.
      expect((yield* Effect.promise(hanging)).length).toBe(share)
      const log = yield* within(5_000, "the quiet account's delivery log", async () => {
        const listed = await quiet("GET", `/api/v1/webhooks/${healthy.json.id}/deliveries`)
        return listed.json.deliveries?.length === 1 ? listed.json.deliveries : undefined
      })
      expect(log.map((a: any) => [a.outcome, a.status_code])).toEqual([["succeeded", 200]])
    }), 60_000)

  it.scopedLive("an account with 200 queued proofs does not hold another account's proof behind them, and never runs more than its 10", () =>
    Effect.gen(function*() {
      // 12 prover threads, each proof 1 s: the busy account can fill its 10, and its queue lasts ~20 s.
      const { busy, quiet } = yield* serverWithAccounts({
        database: yield* database,
        workers: true,
        prover: FakeProver({ duration: "1 second", capacity: 12 })
      })
      for (const from of [0, 100]) {
        const batch = yield* Effect.promise(() =>
          busy("POST", "/api/v1/proofs/batch", {
            proofs: Array.from({ length: 100 }, (_, i) => ({ type: "multiplier", inputs: { a: String(from + i + 2), b: "3" } }))
          })
        )
        expect(batch.status).toBe(202)
      }
      let mostRunning = 0
      const watch = yield* Effect.fork(Effect.forever(Effect.gen(function*() {
        const running = yield* Effect.promise(() => busy("GET", "/api/v1/proofs?status=running&limit=100"))
        mostRunning = Math.max(mostRunning, running.json.total)
        yield* Effect.sleep("20 millis")
      })))

      const mine = yield* Effect.promise(() => quiet("POST", "/api/v1/proofs", { type: "multiplier", inputs: { a: 7, b: 6 } }))
      expect(mine.status).toBe(202)
      yield* within(40_000, "the quiet account's proof", async () => {
        const got = await quiet("GET", `/api/v1/proofs/${mine.json.proof_id}`)
        return got.json.status === "completed" ? got.json : undefined
      })
      const stillQueued = (yield* Effect.promise(() => busy("GET", "/api/v1/proofs?status=queued&limit=1"))).json.total
      yield* Fiber.interrupt(watch)

      // Before the fix it started only once the claims' window of oldest proofs reached it: when
      // fewer than about 20 of the busy account's were left queued.
      expect(stillQueued).toBeGreaterThan(100)
      expect(mostRunning).toBeGreaterThan(0)
      expect(mostRunning).toBeLessThanOrEqual(DEFAULT_LIMITS.maxRunningProofsPerAccount)
    }), 60_000)
})
