import { describe, expect, it } from "@effect/vitest"
import {
  type AccountId,
  Accounts,
  ApiKeys,
  AuditLog,
  DEFAULT_WEBHOOK_CONFIG,
  DeliveriesRepo,
  DeliveryEngine,
  type EventEnvelope,
  EventsRepo,
  type WebhookConfigShape,
  WebhookConfig,
  Webhooks,
  WebhooksRepo
} from "@mzk/core"
import { makeMemoryStore, makeScriptedTransport, type RecordedRequest, type Script, testCore, verifyWebhookSignature } from "@mzk/testkit"
import { Clock, Effect, Exit, Layer, Logger, Option, Redacted, Scope, TestClock } from "effect"

const FAILING = "https://fail.example.com/hook"
const FLAKY = "https://flaky.example.com/hook"
const OK = "https://ok.example.com/hook"
const HANGING = "https://slow.example.com/hook"

const MIN = 60_000
const HOUR = 60 * MIN

/**
 * Runs `body` with the core over the memory store, the delivery engine running, and a scripted
 * transport. Polling is set to a day: every wake-up under test must come from the engine's own
 * due-time tracking or from the in-process nudge, never from a poll that happens to land.
 */
const withEngine = <A, E, R>(
  script: Script,
  body: (transport: { readonly requests: Effect.Effect<ReadonlyArray<RecordedRequest>> }) => Effect.Effect<A, E, R>,
  config: Partial<WebhookConfigShape> = {}
) =>
  Effect.gen(function*() {
    const scripted = yield* makeScriptedTransport(script)
    const layer = DeliveryEngine.layer.pipe(Layer.provide(scripted.layer), Layer.provideMerge(testCore()))
    return yield* Effect.provide(body(scripted), layer)
  }).pipe(Effect.provideService(WebhookConfig, { ...DEFAULT_WEBHOOK_CONFIG, pollIntervalMs: 24 * HOUR, ...config }))

const newAccount = Effect.map(Effect.flatMap(Accounts, (a) => a.create({ name: "Acme" })), (a) => a.id)

/** Lets the engine run everything due now, without moving the clock. */
const settle = TestClock.adjust(0)

const envelopeOf = (request: RecordedRequest) => JSON.parse(request.body) as EventEnvelope
const signatureT = (request: RecordedRequest) => Number(/t=(\d+)/.exec(request.headers["Service-Signature"] ?? "")![1])

const createKey = (account: AccountId, name: string) => Effect.flatMap(ApiKeys, (keys) => keys.create(account, { name }))

describe("delivery engine", () => {
  it.effect("an endpoint that always fails: attempts at +0, +30 s, +5 min, +30 min, +2 h, +8 h, then the webhook is disabled", () =>
    // The clock is set before the engine starts, or it would wake for every poll since 1970.
    Effect.zipRight(TestClock.setTime(Date.UTC(2026, 10, 22, 10, 0)), withEngine({ [FAILING]: [{ status: 500, body: "nope" }] }, (transport) =>
      Effect.gen(function*() {
        const account = yield* newAccount
        const webhooks = yield* Webhooks
        const created = yield* webhooks.create(account, { url: FAILING, events: ["key.created", "key.revoked"] })
        const secret = Redacted.value(created.secret)
        const t0 = yield* Clock.currentTimeMillis
        const key = yield* createKey(account, "first")
        yield* settle
        for (const step of [30_000, 5 * MIN - 30_000, 25 * MIN, 90 * MIN, 5 * HOUR + 59 * MIN]) yield* TestClock.adjust(step)
        // A second event at +7 h 59 min: still pending when the first event's last retry fails.
        yield* (yield* ApiKeys).revoke(account, key.api_key.id)
        yield* settle
        yield* TestClock.adjust(MIN)

        const sent = yield* transport.requests
        const firstEvent = sent.filter((r) => envelopeOf(r).type === "key.created")
        expect(firstEvent.map((r) => r.at_ms - t0)).toEqual([0, 30_000, 5 * MIN, 30 * MIN, 2 * HOUR, 8 * HOUR])
        // The same event id on every attempt, and a signature made at the time of each attempt.
        expect(new Set(firstEvent.map((r) => envelopeOf(r).id)).size).toBe(1)
        expect(firstEvent.map(signatureT)).toEqual(firstEvent.map((r) => Math.floor(r.at_ms / 1000)))
        for (const request of firstEvent) {
          expect(verifyWebhookSignature(request.body, request.headers["Service-Signature"], secret, { now: request.at_ms }))
            .toEqual({ timestamp: signatureT(request) })
          expect(request.headers["Content-Type"]).toBe("application/json")
          expect(request.headers["User-Agent"]).toMatch(/^mzk-webhooks\/\d+\.\d+\.\d+$/)
          expect(request.timeoutMs).toBe(10_000)
        }
        const secondEvent = sent.filter((r) => envelopeOf(r).type === "key.revoked")
        expect(secondEvent.map((r) => r.at_ms - t0)).toEqual([7 * HOUR + 59 * MIN, 7 * HOUR + 59 * MIN + 30_000])

        const webhook = yield* webhooks.get(account, created.webhook.id)
        expect([webhook.active, webhook.disabled_reason]).toEqual([false, "delivery_failures"])
        // mzk switched it off, and says so in the account's audit log.
        const { entries: [disabled] } = yield* (yield* AuditLog).list(account, { action: "webhook.disabled" })
        expect(disabled).toMatchObject({
          actor: { type: "system", id: null },
          target: { type: "webhook", id: created.webhook.id },
          request_id: null,
          changes: [{ field: "active", from: true, to: false }, { field: "disabled_reason", from: null, to: "delivery_failures" }],
          created_at: "2026-11-22T18:00:00.000Z"
        })
        const deliveries = yield* DeliveriesRepo
        const [first] = yield* deliveries.listByEvent(envelopeOf(firstEvent[0]!).id)
        expect([first!.status, first!.attempts, first!.next_attempt_at]).toEqual(["failed", 6, null])
        const [second] = yield* deliveries.listByEvent(envelopeOf(secondEvent[0]!).id)
        expect([second!.status, second!.attempts]).toEqual(["cancelled", 2])

        // Nothing more: no retry of the cancelled delivery, and new events find no active subscriber.
        yield* createKey(account, "after")
        yield* TestClock.adjust(48 * HOUR)
        expect((yield* transport.requests).length).toBe(sent.length)

        const log = yield* webhooks.listDeliveryAttempts(account, created.webhook.id, { limit: 100 })
        expect(log.total).toBe(8)
        expect(log.attempts.filter((a) => a.event_type === "key.created").map((a) => [a.attempt, a.outcome, a.status_code, a.error]))
          .toEqual([1, 2, 3, 4, 5, 6].map((n) => [n, "failed", 500, null]))
        expect(log.attempts[0]!.response_body).toBe("nope")
        expect(log.attempts[0]!.attempted_at).toBe("2026-11-22T10:00:00.000Z")
      }))))

  it.effect("success on the third attempt: attempts at +0, +30 s, +5 min and nothing after", () =>
    withEngine({ [FLAKY]: [{ status: 503 }, { error: "connection" }, { status: 204 }] }, (transport) =>
      Effect.gen(function*() {
        const account = yield* newAccount
        const webhooks = yield* Webhooks
        const created = yield* webhooks.create(account, { url: FLAKY, events: ["key.created"] })
        const t0 = yield* Clock.currentTimeMillis
        yield* createKey(account, "k")
        yield* settle
        yield* TestClock.adjust(30_000)
        yield* TestClock.adjust(5 * MIN)
        yield* TestClock.adjust(24 * HOUR)
        const sent = yield* transport.requests
        expect(sent.map((r) => r.at_ms - t0)).toEqual([0, 30_000, 5 * MIN])
        expect(new Set(sent.map((r) => envelopeOf(r).id)).size).toBe(1)
        expect(new Set(sent.map((r) => r.headers["Service-Signature"])).size).toBe(3)
        const [delivery] = yield* (yield* DeliveriesRepo).listByEvent(envelopeOf(sent[0]!).id)
        expect([delivery!.status, delivery!.attempts, delivery!.next_attempt_at]).toEqual(["succeeded", 3, null])
        const log = yield* webhooks.listDeliveryAttempts(account, created.webhook.id)
        expect(log.attempts.map((a) => [a.attempt, a.outcome, a.status_code, a.error])).toEqual([
          [1, "failed", 503, null],
          [2, "failed", null, "connection"],
          [3, "succeeded", 204, null]
        ])
        expect((yield* webhooks.get(account, created.webhook.id)).active).toBe(true)
      })))

  it.effect("inactive webhooks and unsubscribed types receive nothing", () =>
    withEngine({}, (transport) =>
      Effect.gen(function*() {
        const account = yield* newAccount
        const webhooks = yield* Webhooks
        yield* webhooks.create(account, { url: "https://off.example.com/", events: ["key.created"], active: false })
        yield* webhooks.create(account, { url: "https://other-type.example.com/", events: ["key.revoked", "proof.completed"] })
        yield* webhooks.create(account, { url: OK, events: ["key.created"] })
        const paused = yield* webhooks.create(account, { url: "https://paused.example.com/", events: ["key.created"] })
        yield* webhooks.update(account, paused.webhook.id, { active: false })
        yield* createKey(account, "k")
        yield* settle
        yield* TestClock.adjust(24 * HOUR)
        expect((yield* transport.requests).map((r) => r.url)).toEqual([OK])
      })))

  it.effect("a delivery to a webhook switched off after the event is cancelled, and switching it on starts afresh", () =>
    withEngine({ [FAILING]: [{ status: 500 }, { status: 200 }] }, (transport) =>
      Effect.gen(function*() {
        const account = yield* newAccount
        const webhooks = yield* Webhooks
        const created = yield* webhooks.create(account, { url: FAILING, events: ["key.created"] })
        yield* createKey(account, "one")
        yield* settle
        expect((yield* transport.requests).length).toBe(1)
        yield* webhooks.update(account, created.webhook.id, { active: false })
        yield* TestClock.adjust(HOUR)
        expect((yield* transport.requests).length).toBe(1)
        const [delivery] = yield* (yield* DeliveriesRepo).listByEvent(envelopeOf((yield* transport.requests)[0]!).id)
        expect(delivery!.status).toBe("cancelled")
        yield* webhooks.update(account, created.webhook.id, { active: true })
        yield* TestClock.adjust(HOUR)
        expect((yield* transport.requests).length).toBe(1)
        yield* createKey(account, "two")
        yield* settle
        const sent = yield* transport.requests
        expect(sent.length).toBe(2)
        expect(envelopeOf(sent[1]!).id).not.toBe(envelopeOf(sent[0]!).id)
      })))

  it.effect("a deleted webhook gets no retry", () =>
    withEngine({ [FAILING]: [{ status: 500 }] }, (transport) =>
      Effect.gen(function*() {
        const account = yield* newAccount
        const webhooks = yield* Webhooks
        const created = yield* webhooks.create(account, { url: FAILING, events: ["key.created"] })
        yield* createKey(account, "one")
        yield* settle
        yield* webhooks.remove(account, created.webhook.id)
        yield* TestClock.adjust(24 * HOUR)
        expect((yield* transport.requests).length).toBe(1)
      })))

  it.effect("an endpoint that hangs until the timeout does not delay delivery to another", () =>
    withEngine({ [HANGING]: [{ hang: true }] }, (transport) =>
      Effect.gen(function*() {
        const account = yield* newAccount
        const webhooks = yield* Webhooks
        yield* webhooks.create(account, { url: HANGING, events: ["key.created"] })
        yield* webhooks.create(account, { url: OK, events: ["key.created"] })
        const t0 = yield* Clock.currentTimeMillis
        for (let i = 0; i < 6; i++) yield* createKey(account, `k${i}`)
        yield* settle
        const sent = yield* transport.requests
        // Every event reached the healthy endpoint at once, while the hanging one held its two slots.
        expect(sent.filter((r) => r.url === OK).map((r) => r.at_ms - t0)).toEqual([0, 0, 0, 0, 0, 0])
        expect(sent.filter((r) => r.url === HANGING).length).toBe(2)
        yield* TestClock.adjust(10_000)
        const later = yield* transport.requests
        expect(later.filter((r) => r.url === HANGING).map((r) => r.at_ms - t0)).toEqual([0, 0, 10_000, 10_000])
        const log = yield* webhooks.list(account)
        const hanging = log.webhooks.find((w) => w.url === HANGING)!
        const attempts = yield* webhooks.listDeliveryAttempts(account, hanging.id)
        expect(attempts.attempts.map((a) => [a.error, a.latency_ms])).toEqual([["timeout", 10_000], ["timeout", 10_000]])
      }), { maxConcurrentPerWebhook: 2, maxConcurrentDeliveries: 4 }))

  it.effect("non-public URLs already in storage are refused at delivery time and never sent", () =>
    withEngine({}, (transport) =>
      Effect.gen(function*() {
        const account = yield* newAccount
        const webhooks = yield* Webhooks
        const ok = yield* webhooks.create(account, { url: OK, events: ["key.created"] })
        const repo = yield* WebhooksRepo
        const urls = ["https://127.0.0.1/", "https://[::1]/", "https://10.0.0.5/", "https://169.254.169.254/latest", "https://[::ffff:127.0.0.1]/", "https://localhost/"]
        // Written past the service, as a record from before a policy change would be.
        for (const url of urls) {
          const record = yield* repo.get(account, ok.webhook.id)
          yield* repo.insert({ ...Option.getOrThrow(record), id: `wh_${"0".repeat(25)}${urls.indexOf(url)}` as never, url }, { maxPerAccount: 20 })
        }
        yield* createKey(account, "k")
        yield* settle
        expect((yield* transport.requests).map((r) => r.url)).toEqual([OK])
        for (let i = 0; i < urls.length; i++) {
          const log = yield* webhooks.listDeliveryAttempts(account, `wh_${"0".repeat(25)}${i}`)
          expect(log.attempts.map((a) => [a.outcome, a.error, a.status_code])).toEqual([["failed", "blocked_address", null]])
        }
      })))

  it.effect("deliveries written by another process are picked up on the next poll", () =>
    withEngine({}, (transport) =>
      Effect.gen(function*() {
        const account = yield* newAccount
        yield* (yield* Webhooks).create(account, { url: OK, events: ["key.created"] })
        yield* createKey(account, "k")
        yield* settle
        expect((yield* transport.requests).length).toBe(1)
        const [event] = (yield* (yield* EventsRepo).list(account, { limit: 10 })).items
        const deliveries = yield* DeliveriesRepo
        const [delivery] = yield* deliveries.listByEvent(event!.id)
        // Written straight to storage: no in-process nudge, as when another process records it.
        yield* deliveries.insertMany([{
          ...delivery!,
          id: `del_${"0".repeat(26)}` as never,
          status: "pending",
          attempts: 0,
          next_attempt_at: delivery!.created_at,
          lease_expires_at: null,
          first_failed_at: null,
          last_attempt_at: null
        }])
        yield* TestClock.adjust(4 * MIN)
        expect((yield* transport.requests).length).toBe(1)
        yield* TestClock.adjust(MIN)
        expect((yield* transport.requests).length).toBe(2)
      }), { pollIntervalMs: 5 * MIN }))

  it.effect("two engines on one store send every delivery once", () =>
    Effect.gen(function*() {
      const first = yield* makeScriptedTransport({})
      const second = yield* makeScriptedTransport({})
      const engines = Layer.merge(
        DeliveryEngine.layer.pipe(Layer.provide(first.layer)),
        DeliveryEngine.layer.pipe(Layer.provide(second.layer))
      )
      yield* Effect.gen(function*() {
        const account = yield* newAccount
        const webhooks = yield* Webhooks
        yield* webhooks.create(account, { url: OK, events: ["key.created"] })
        yield* webhooks.create(account, { url: FLAKY, events: ["key.created"] })
        for (let i = 0; i < 8; i++) yield* createKey(account, `k${i}`)
        yield* settle
        yield* TestClock.adjust(MIN)
        const sent = [...(yield* first.requests), ...(yield* second.requests)]
        expect(sent.length).toBe(16)
        expect(new Set(sent.map((r) => `${r.url} ${envelopeOf(r).id}`)).size).toBe(16)
      }).pipe(Effect.provide(engines.pipe(Layer.provideMerge(testCore()))))
    }).pipe(Effect.provideService(WebhookConfig, { ...DEFAULT_WEBHOOK_CONFIG, pollIntervalMs: 10_000, maxConcurrentPerWebhook: 2 })))

  it.effect("an engine stopped mid-request hands the delivery back: another engine sends it at once, not after the lease", () =>
    Effect.gen(function*() {
      // Two processes over one store; the first engine's request hangs when it is stopped.
      const store = yield* makeMemoryStore
      const core = testCore(Layer.succeedContext(store))
      const hanging = yield* makeScriptedTransport({ [OK]: [{ hang: true }] })
      const healthy = yield* makeScriptedTransport({})
      const firstScope = yield* Scope.make()
      const first = yield* Layer.buildWithScope(DeliveryEngine.layer.pipe(Layer.provide(hanging.layer), Layer.provideMerge(core)), firstScope)
      const account = yield* newAccount.pipe(Effect.provide(first))
      yield* Effect.flatMap(Webhooks, (w) => w.create(account, { url: OK, events: ["key.created"] })).pipe(Effect.provide(first))
      yield* createKey(account, "k").pipe(Effect.provide(first))
      yield* settle
      expect((yield* hanging.requests).length).toBe(1)
      yield* Scope.close(firstScope, Exit.void)

      const t0 = yield* Clock.currentTimeMillis
      yield* Effect.gen(function*() {
        yield* settle
        const sent = yield* healthy.requests
        expect(sent.map((r) => [r.url, r.at_ms - t0])).toEqual([[OK, 0]])
      }).pipe(Effect.provide(DeliveryEngine.layer.pipe(Layer.provide(healthy.layer), Layer.provideMerge(core))))
    }).pipe(Effect.scoped, Effect.provideService(WebhookConfig, { ...DEFAULT_WEBHOOK_CONFIG, pollIntervalMs: 24 * HOUR })))

  it.effect("the engine's logs name ids, never the secret or the payload", () => {
    const lines: Array<string> = []
    const capture = Logger.replace(Logger.defaultLogger, Logger.make(({ annotations, message }) => {
      lines.push(JSON.stringify({ message, annotations: [...annotations] }))
    }))
    return withEngine({ [FAILING]: [{ status: 500, body: "server says no" }] }, () =>
      Effect.gen(function*() {
        const account = yield* newAccount
        const created = yield* (yield* Webhooks).create(account, { url: FAILING, events: ["key.created"] })
        const key = yield* createKey(account, "k")
        yield* settle
        yield* TestClock.adjust(10 * HOUR)
        expect((yield* (yield* Webhooks).get(account, created.webhook.id)).active).toBe(false)
        expect(lines.some((line) => line.includes(created.webhook.id))).toBe(true)
        const all = lines.join("\n")
        expect(all).not.toContain(Redacted.value(created.secret))
        expect(all).not.toContain("whsec_")
        expect(all).not.toContain(key.api_key.id)
        expect(all).not.toContain("server says no")
      })).pipe(Effect.provide(capture))
  })

  it.effect("a waiting delivery whose lease is too short for an attempt is claimed afresh before it is sent", () =>
    withEngine({ [HANGING]: [{ hang: true }] }, (transport) =>
      Effect.gen(function*() {
        const account = yield* newAccount
        yield* (yield* Webhooks).create(account, { url: HANGING, events: ["key.created"] })
        const t0 = yield* Clock.currentTimeMillis
        yield* createKey(account, "first")
        yield* createKey(account, "second")
        yield* settle
        expect((yield* transport.requests).length).toBe(1)
        yield* TestClock.adjust(10_000)
        const sent = yield* transport.requests
        expect(sent.map((r) => r.at_ms - t0)).toEqual([0, 10_000])
        // Claimed at +0 with a lease to +14 s, it waited behind the first attempt; at +10 s only 4 s
        // were left, so it was handed back and claimed again (lease to +24 s) before being sent.
        const [delivery] = yield* (yield* DeliveriesRepo).listByEvent(envelopeOf(sent[1]!).id)
        expect(delivery!.lease_expires_at).toBe(new Date(t0 + 24_000).toISOString())
      }), { maxConcurrentPerWebhook: 1, leaseMs: 14_000 }))
})
