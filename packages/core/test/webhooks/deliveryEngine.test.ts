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
import { makeSqliteMemoryStore, makeScriptedTransport, type RecordedRequest, type Script, testCore, verifyWebhookSignature } from "@mzk/testkit"
import { Clock, Effect, Exit, Layer, Logger, Option, Redacted, Scope, TestClock } from "effect"
import { createHmac } from "node:crypto"

/** Storage lists newest first; this file reads events in the order they happened. */
const oldestFirst = <A>(items: ReadonlyArray<A>): Array<A> => [...items].reverse()

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

/** Which of `secrets` a request's Standard Webhooks signature was made with, checked independently with node:crypto. */
const standardSigners = (request: RecordedRequest, secrets: ReadonlyArray<string>) => {
  const id = request.headers["webhook-id"]
  const t = request.headers["webhook-timestamp"]
  const entries = (request.headers["webhook-signature"] ?? "").split(" ")
  return secrets.filter((secret) => {
    const expected = createHmac("sha256", Buffer.from(secret.slice("whsec_".length), "base64")).update(`${id}.${t}.${request.body}`).digest("base64")
    return entries.includes(`v1,${expected}`)
  })
}

/** Which of `secrets` verify a request's `Service-Signature` at the time it was sent. */
const serviceSigners = (request: RecordedRequest, secrets: ReadonlyArray<string>) =>
  secrets.filter((secret) => {
    try {
      verifyWebhookSignature(request.body, request.headers["Service-Signature"], secret, { now: request.at_ms })
      return true
    } catch {
      return false
    }
  })

/** Every log line the effect writes: message, level and annotations. */
const captureLogs = () => {
  const lines: Array<{ message: string; level: string; annotations: Record<string, unknown> }> = []
  const layer = Logger.replace(Logger.defaultLogger, Logger.make(({ annotations, logLevel, message }) => {
    lines.push({ message: String(message), level: logLevel.label, annotations: Object.fromEntries(annotations) })
  }))
  return { lines, layer }
}

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
          .toEqual([6, 5, 4, 3, 2, 1].map((n) => [n, "failed", 500, null]))
        // Newest first: the first attempt is the last of the log.
        expect(log.attempts.at(-1)!.response_body).toBe("nope")
        expect(log.attempts.at(-1)!.attempted_at).toBe("2026-11-22T10:00:00.000Z")
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
          [3, "succeeded", 204, null],
          [2, "failed", null, "connection"],
          [1, "failed", 503, null]
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

  it.effect("an account whose endpoints all hang holds only its share of the slots: another account's delivery goes at once", () => {
    const hangs = [1, 2, 3].map((i) => `${HANGING}/${i}`)
    return withEngine(Object.fromEntries(hangs.map((url) => [url, [{ hang: true }]])), (transport) =>
      Effect.gen(function*() {
        const webhooks = yield* Webhooks
        const busy = yield* newAccount
        const quiet = yield* newAccount
        for (const url of hangs) yield* webhooks.create(busy, { url, events: ["key.created"] })
        yield* webhooks.create(quiet, { url: OK, events: ["key.created"] })
        const t0 = yield* Clock.currentTimeMillis
        // 4 events to 3 hanging endpoints: 12 deliveries, 2 slots each wanted, 4 slots in all.
        for (let i = 0; i < 4; i++) yield* createKey(busy, `b${i}`)
        yield* settle
        expect((yield* transport.requests).length).toBe(2)
        yield* createKey(quiet, "q")
        yield* settle
        const sent = yield* transport.requests
        // Before the fix the busy account held all 4 slots, and this waited for a 10 s timeout.
        expect(sent.filter((r) => r.url === OK).map((r) => r.at_ms - t0)).toEqual([0])
        expect(sent.filter((r) => r.url !== OK)).toHaveLength(2)
        // Its share frees at the timeout, and the next two of its deliveries go then.
        yield* TestClock.adjust(10_000)
        expect((yield* transport.requests).filter((r) => r.url !== OK).map((r) => r.at_ms - t0)).toEqual([0, 0, 10_000, 10_000])
      }), { maxConcurrentPerWebhook: 2, maxConcurrentDeliveries: 4, maxConcurrentPerAccount: 2 })
  })

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
        const [event] = oldestFirst((yield* (yield* EventsRepo).list(account, { limit: 10 })).items)
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
      const store = yield* makeSqliteMemoryStore
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

describe("signatures of a delivery", () => {
  it.effect("every attempt carries Service-Signature and the Standard Webhooks headers over one timestamp, with the event id", () =>
    withEngine({ [FLAKY]: [{ status: 500 }, { status: 200 }] }, (transport) =>
      Effect.gen(function*() {
        const account = yield* newAccount
        const created = yield* (yield* Webhooks).create(account, { url: FLAKY, events: ["key.created"] })
        const secret = Redacted.value(created.secret)
        yield* createKey(account, "k")
        yield* settle
        yield* TestClock.adjust(30_000)
        const sent = yield* transport.requests
        expect(sent.length).toBe(2)
        for (const request of sent) {
          expect(request.headers["webhook-id"]).toBe(envelopeOf(request).id)
          expect(request.headers["webhook-timestamp"]).toBe(String(signatureT(request)))
          expect(request.headers["webhook-timestamp"]).toBe(String(Math.floor(request.at_ms / 1000)))
          expect(request.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/)
          expect(request.headers["Service-Signature"]).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/)
          expect(standardSigners(request, [secret, "whsec_b3RoZXItb3RoZXItb3RoZXItb3RoZXItb3RoZXItb3Q="])).toEqual([secret])
          expect(serviceSigners(request, [secret])).toEqual([secret])
        }
        // Signed afresh: the retry has its own timestamp and signatures.
        expect(sent[1]!.headers["webhook-timestamp"]).toBe(String(Number(sent[0]!.headers["webhook-timestamp"]) + 30))
        expect(sent[1]!.headers["webhook-signature"]).not.toBe(sent[0]!.headers["webhook-signature"])
      })))

  it.effect("during a rotation's overlap each scheme carries a signature per live secret, the new one first; after it only the new one", () =>
    withEngine({ [FLAKY]: (n) => (n === 2 ? { status: 500 } : { status: 200 }) }, (transport) =>
      Effect.gen(function*() {
        const account = yield* newAccount
        const webhooks = yield* Webhooks
        const created = yield* webhooks.create(account, { url: FLAKY, events: ["key.created"] })
        const old = Redacted.value(created.secret)
        const rotated = yield* webhooks.rotateSecret(account, created.webhook.id, { expires_in: 600 })
        const fresh = Redacted.value(rotated.secret)
        const t0 = yield* Clock.currentTimeMillis

        yield* createKey(account, "in-overlap")
        yield* settle
        // 10 s before the overlap ends: this attempt fails, and its retry comes 30 s later, after the end.
        yield* TestClock.adjust(590_000)
        yield* createKey(account, "just-before-the-end")
        yield* settle
        yield* TestClock.adjust(30_000)
        yield* createKey(account, "after")
        yield* settle

        const sent = yield* transport.requests
        expect(sent.map((r) => r.at_ms - t0)).toEqual([0, 590_000, 620_000, 620_000])
        const [during, failed, retried, after] = sent as [RecordedRequest, RecordedRequest, RecordedRequest, RecordedRequest]
        for (const request of [during, failed]) {
          expect(request.headers["Service-Signature"]!.split(",").map((part) => part.split("=")[0])).toEqual(["t", "v1", "v1"])
          expect(request.headers["Service-Signature"]!.split(",")[1]).toBe(`v1=${createHmac("sha256", fresh).update(`${signatureT(request)}.${request.body}`).digest("hex")}`)
          expect(serviceSigners(request, [old, fresh])).toEqual([old, fresh])
          expect(request.headers["webhook-signature"]!.split(" ").length).toBe(2)
          expect(standardSigners(request, [old, fresh])).toEqual([old, fresh])
        }
        // The retry of the delivery that failed in the overlap is signed again, now with the new secret only.
        expect(envelopeOf(retried).id).toBe(envelopeOf(failed).id)
        for (const request of [retried, after]) {
          expect(request.headers["Service-Signature"]).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/)
          expect(serviceSigners(request, [old, fresh])).toEqual([fresh])
          expect(standardSigners(request, [old, fresh])).toEqual([fresh])
        }
      })))
})

describe("receivers' signals", () => {
  const GONE = "https://gone.example.com/hook"
  const BUSY = "https://busy.example.com/hook"
  const GARBLED = "https://garbled.example.com/hook"

  it.effect("a 410 Gone disables the webhook at once (endpoint_gone) and cancels its other pending deliveries, in one go", () => {
    const logs = captureLogs()
    return withEngine({ [GONE]: [{ status: 410, body: "no such hook" }] }, (transport) =>
      Effect.gen(function*() {
        const account = yield* newAccount
        const webhooks = yield* Webhooks
        const gone = yield* webhooks.create(account, { url: GONE, events: ["key.created"] })
        const ok = yield* webhooks.create(account, { url: OK, events: ["key.created"] })
        // One slot per webhook: the second and third events wait while the first attempt gets its 410.
        for (const name of ["one", "two", "three"]) yield* createKey(account, name)
        yield* settle
        yield* TestClock.adjust(24 * HOUR)

        const sent = yield* transport.requests
        expect(sent.filter((r) => r.url === GONE).length).toBe(1)
        expect(sent.filter((r) => r.url === OK).length).toBe(3)
        const webhook = yield* webhooks.get(account, gone.webhook.id)
        expect([webhook.active, webhook.disabled_reason]).toEqual([false, "endpoint_gone"])
        const { entries: [audited] } = yield* (yield* AuditLog).list(account, { action: "webhook.disabled" })
        expect(audited).toMatchObject({
          actor: { type: "system", id: null },
          target: { type: "webhook", id: gone.webhook.id },
          changes: [{ field: "active", from: true, to: false }, { field: "disabled_reason", from: null, to: "endpoint_gone" }]
        })
        expect((yield* webhooks.get(account, ok.webhook.id)).active).toBe(true)
        const deliveries = yield* DeliveriesRepo
        const statuses = yield* Effect.forEach(sent.filter((r) => r.url === OK), (r) =>
          Effect.map(deliveries.listByEvent(envelopeOf(r).id), (all) => all.find((d) => d.webhook_id === gone.webhook.id)!.status))
        expect(statuses).toEqual(["failed", "cancelled", "cancelled"])
        const log = yield* webhooks.listDeliveryAttempts(account, gone.webhook.id)
        expect(log.attempts.map((a) => [a.attempt, a.outcome, a.status_code, a.response_body])).toEqual([[1, "failed", 410, "no such hook"]])

        const attemptLine = logs.lines.find((l) => l.annotations.event === "webhook.attempt" && l.annotations.status_code === 410)
        expect(attemptLine?.annotations).toMatchObject({ delivery_status: "failed", disabled_reason: "endpoint_gone" })
        const warning = logs.lines.find((l) => l.level === "WARN" && l.annotations.webhook_id === gone.webhook.id)
        expect(warning).toMatchObject({ message: expect.stringContaining("410 Gone"), annotations: { disabled_reason: "endpoint_gone" } })

        // Switched on again by its owner, it starts afresh.
        const on = yield* webhooks.update(account, gone.webhook.id, { active: true })
        expect([on.active, on.disabled_reason]).toEqual([true, null])
      }), { maxConcurrentPerWebhook: 1 }).pipe(Effect.provide(logs.layer))
  })

  it.effect("a 429 or 503 with Retry-After (seconds or date) delays the next attempt to when asked, never past the retry after it", () => {
    const logs = captureLogs()
    return Effect.gen(function*() {
      yield* TestClock.setTime(Date.UTC(2026, 10, 22, 10, 0))
      const t0 = yield* Clock.currentTimeMillis
      yield* withEngine({
        [BUSY]: [
          { status: 429, retryAfter: "120" },
          { status: 503, retryAfter: new Date(t0 + 20 * MIN).toUTCString() },
          { status: 503, retryAfter: "999999" },
          { status: 204 }
        ],
        [GARBLED]: [{ status: 503, retryAfter: "in a minute" }, { status: 429, retryAfter: "10" }, { status: 204 }]
      }, (transport) =>
        Effect.gen(function*() {
          const account = yield* newAccount
          const webhooks = yield* Webhooks
          yield* webhooks.create(account, { url: BUSY, events: ["key.created"] })
          yield* webhooks.create(account, { url: GARBLED, events: ["key.created"] })
          yield* createKey(account, "k")
          yield* settle
          for (const step of [30_000, 90_000, 18 * MIN, 10 * MIN, 90 * MIN]) yield* TestClock.adjust(step)
          const sent = yield* transport.requests
          // Asked 120 s (the schedule's 30 s moves); asked +20 min (5 min moves); asked 11 days: capped at 2 h, when the retry after it is due.
          expect(sent.filter((r) => r.url === BUSY).map((r) => r.at_ms - t0)).toEqual([0, 120_000, 20 * MIN, 2 * HOUR])
          // Garbage changes nothing; a wait shorter than the schedule neither.
          expect(sent.filter((r) => r.url === GARBLED).map((r) => r.at_ms - t0)).toEqual([0, 30_000, 5 * MIN])
          const asked = logs.lines.filter((l) => l.annotations.event === "webhook.attempt" && l.annotations.status_code === 429)
            .map((l) => [l.annotations.retry_after_seconds, l.annotations.next_attempt_at])
          expect(asked).toEqual([
            [120, new Date(t0 + 120_000).toISOString()],
            [10, new Date(t0 + 5 * MIN).toISOString()]
          ])
        }))
    }).pipe(Effect.provide(logs.layer))
  })
})
