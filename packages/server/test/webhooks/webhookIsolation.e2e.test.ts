import { expect, it } from "@effect/vitest"
import { type AccountId, Accounts, ApiKeys, DEFAULT_WEBHOOK_CONFIG } from "@mzk/core"
import { eventually, FakeProver, makeHttpClient, startWebhookReceiver } from "@mzk/testkit"
import { Effect, Redacted } from "effect"
import { describe } from "vitest"
import { startServer } from "../realServer.js"

const api = (baseUrl: string, key: string) => {
  const client = makeHttpClient(baseUrl, { token: key })
  return (method: string, path: string, body?: unknown) => client.send(method, path, { body })
}

/** Polls (real time) until `probe` gives a value, or fails after `ms`: well inside the 10 s attempt timeout. */
const within = <A>(ms: number, what: string, probe: () => Promise<A | undefined>) =>
  Effect.promise(() => eventually(probe, ms).catch(() => Promise.reject(new Error(`${what}: not within ${ms} ms`))))

describe("webhook delivery isolation between tenants on one host:port", () => {
  it.scopedLive("a tenant's hanging receiver neither delays nor fails another tenant's healthy webhook on the same host:port", () =>
    Effect.gen(function*() {
      // One receiver, one host:port: paths under /hang never answer, /ok answers 200 at once.
      const receiver = yield* startWebhookReceiver({ reply: (request) => (request.path.startsWith("/hang") ? { hang: true } : {}) })
      const origin = `http://127.0.0.1:${receiver.port}`
      const { baseUrl, context } = yield* startServer({ workers: true, allowInsecureWebhooks: true, prover: FakeProver() })
      const account = (name: string) =>
        Effect.gen(function*() {
          const id = (yield* (yield* Accounts).create({ name })).id as AccountId
          return api(baseUrl, Redacted.value((yield* (yield* ApiKeys).create(id, { name: "bootstrap" })).secret))
        }).pipe(Effect.provide(context))
      const hostile = yield* account("Hanging")
      const victim = yield* account("Healthy")

      // H: four webhooks on the host:port, then 8 key.created events = 32 deliveries that hang.
      for (let i = 0; i < 4; i++) {
        const created = yield* Effect.promise(() => hostile("POST", "/api/v1/webhooks", { url: `${origin}/hang/${i}`, events: ["key.created"] }))
        expect(created.status).toBe(201)
      }
      const healthy = yield* Effect.promise(() => victim("POST", "/api/v1/webhooks", { url: `${origin}/ok`, events: ["key.created"] }))
      expect(healthy.status).toBe(201)
      for (let i = 0; i < 8; i++) expect((yield* Effect.promise(() => hostile("POST", "/api/v1/keys", { name: `k${i}` }))).status).toBe(201)
      const hanging = () => Effect.runPromise(Effect.map(receiver.received, (all) => all.filter((r) => r.path.startsWith("/hang")).length))
      yield* within(3_000, "hanging deliveries in flight", async () => ((await hanging()) >= 16 ? true : undefined))

      // V's event: its receiver has it at once, and its log records a success with a small latency.
      const sentAt = Date.now()
      expect((yield* Effect.promise(() => victim("POST", "/api/v1/keys", { name: "v" }))).status).toBe(201)
      const arrived = yield* within(3_000, "the healthy webhook's delivery", async () =>
        (await Effect.runPromise(receiver.received)).find((r) => r.path === "/ok"))
      expect(arrived.receivedAtMs - sentAt).toBeLessThan(1_000)
      const log = yield* within(3_000, "the healthy webhook's delivery log", async () => {
        const listed = await victim("GET", `/api/v1/webhooks/${healthy.json.id}/deliveries`)
        return listed.json.total === 1 ? listed.json.deliveries : undefined
      })
      expect(log.map((a: any) => [a.outcome, a.status_code, a.error])).toEqual([["succeeded", 200, null]])
      expect(log[0].latency_ms).toBeLessThan(1_000)
      // And H has its account's whole share (16) in flight at once, over four webhooks on one
      // host:port: no cap per host:port held them back.
      const share = DEFAULT_WEBHOOK_CONFIG.maxConcurrentPerAccount
      yield* within(3_000, `${share} hanging deliveries in flight`, async () => ((await hanging()) >= share ? true : undefined))
    }), 30_000)
})
