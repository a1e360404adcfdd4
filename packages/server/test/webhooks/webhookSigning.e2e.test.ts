import { expect, it } from "@effect/vitest"
import { type AccountId, Accounts, ApiKeys, DEFAULT_RECOVERY_CONFIG, RecoveryConfig } from "@mzk/core"
import {
  eventually,
  FakeProver,
  makeHttpClient,
  type ReceivedWebhook,
  type ReceiverOptions,
  startWebhookReceiver,
  verifyWebhookSignature
} from "@mzk/testkit"
import { Effect, Redacted, TestClock } from "effect"
import { Webhook } from "standardwebhooks"
import Stripe from "stripe"
import { describe } from "vitest"
import { startServer } from "../realServer.js"

/**
 * Real deliveries, over a real port, from a whole mzk server (SQLite, the Node transport, the
 * delivery engine) whose clock is `TestClock`: set to the wall clock's time first, since the
 * receivers' libraries check signatures against the wall clock, then moved past a rotation's
 * overlap or a Retry-After without waiting.
 */

const DAY_MS = 86_400_000
const stripe = new Stripe("sk_test_only_for_its_webhook_helpers")

/** Effects waiting on the network, bounded in real time (a TestClock timeout would never fire). */
const within = <A>(what: string, effect: Effect.Effect<A>) =>
  Effect.promise(() => Effect.runPromise(effect.pipe(Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => new Error(`${what}: not within 10 s`) }))))

/** A server with its loops and a receiver; an account with an all-scope key, called over HTTP. */
const setUp = (receiverOptions: ReceiverOptions = {}) =>
  Effect.gen(function*() {
    yield* TestClock.setTime(Date.now())
    const receiver = yield* startWebhookReceiver(receiverOptions)
    const { baseUrl, context } = yield* startServer({
      workers: true,
      allowInsecureWebhooks: true,
      prover: FakeProver(),
      // Work this process records wakes its loops at once; their polls (for other processes' work)
      // would each cost real time as TestClock passes them, so they come once a day.
      webhooks: { pollIntervalMs: DAY_MS },
      proofs: { pollIntervalMs: DAY_MS, sweepIntervalMs: DAY_MS },
      circuits: { pollIntervalMs: DAY_MS }
    }).pipe(
      // Not a server option; the loop reads it from the context it is started in. Left at its 5 s,
      // the 9 hours this test passes over would wake it 6,480 times, a few ms of real time each.
      Effect.provideService(RecoveryConfig, { ...DEFAULT_RECOVERY_CONFIG, pollIntervalMs: DAY_MS })
    )
    const key = yield* Effect.gen(function*() {
      const account = (yield* (yield* Accounts).create({ name: "Receivers" })).id as AccountId
      return Redacted.value((yield* (yield* ApiKeys).create(account, { name: "bootstrap" })).secret)
    }).pipe(Effect.provide(context))
    const client = makeHttpClient(baseUrl, { token: key })
    const call = (method: string, path: string, body?: unknown) => Effect.promise(() => client.send(method, path, { body }))
    /** Records a `key.created` event; resolves with every request the receiver has, once it has `count`. */
    const deliver = (count: number) =>
      Effect.gen(function*() {
        expect((yield* call("POST", "/api/v1/keys", { name: `event-${count}` })).status).toBe(201)
        return yield* within(`delivery ${count}`, receiver.waitFor(count))
      })
    /**
     * The webhook's delivery log once it holds `count` attempts. The receiver sees a request before
     * the server records its answer; a test that moves the clock must wait for the record, or the
     * next attempt is scheduled from the moved clock.
     */
    const attemptsLogged = (webhookId: string, count: number) =>
      Effect.promise(() =>
        eventually(async () => {
          const listed = await Effect.runPromise(call("GET", `/api/v1/webhooks/${webhookId}/deliveries`))
          // The log lists newest first; the test reads it in the order the attempts were made.
          return listed.json.total === count ? [...listed.json.deliveries as Array<{ status_code: number }>].reverse() : undefined
        }, 20_000))
    return { receiver, call, deliver, attemptsLogged }
  })

const headersOf = (request: ReceivedWebhook) => ({
  "webhook-id": request.headers["webhook-id"] as string,
  "webhook-timestamp": request.headers["webhook-timestamp"] as string,
  "webhook-signature": request.headers["webhook-signature"] as string
})

/** Which checks accept the delivery with `secret`: the standardwebhooks library, Stripe's SDK and @mzk/webhooks' rule. */
const acceptedBy = (request: ReceivedWebhook, secret: string) => {
  const body = request.rawBody.toString("utf8")
  const accepts = (check: () => { readonly id?: unknown }) => {
    try {
      return check().id === JSON.parse(body).id
    } catch {
      return false
    }
  }
  return {
    standardwebhooks: accepts(() => new Webhook(secret).verify(body, headersOf(request)) as { id: unknown }),
    stripe: accepts(() => stripe.webhooks.constructEvent(body, request.headers["service-signature"] as string, secret)),
    mzk: accepts(() => {
      verifyWebhookSignature(request.rawBody, request.headers["service-signature"] as string, secret)
      return JSON.parse(body) as { id: unknown }
    })
  }
}

const ALL = { standardwebhooks: true, stripe: true, mzk: true }
const NONE = { standardwebhooks: false, stripe: false, mzk: false }

describe("receivers verify real deliveries with the libraries they already use", () => {
  it.scoped("standardwebhooks and Stripe's SDK accept deliveries with either secret during a rotation's overlap, and only the new one after it", () =>
    Effect.gen(function*() {
      const { call, deliver, receiver } = yield* setUp()
      const created = yield* call("POST", "/api/v1/webhooks", { url: receiver.url, events: ["key.created"] })
      expect(created.status).toBe(201)
      const old: string = created.json.secret

      const [before] = yield* deliver(1)
      expect(acceptedBy(before!, old)).toEqual(ALL)
      expect(before!.headers["webhook-id"]).toBe(JSON.parse(before!.rawBody.toString("utf8")).id)
      expect(before!.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/)

      const rotated = yield* call("POST", `/api/v1/webhooks/${created.json.id}/rotate-secret`, { expires_in: 60 })
      expect(rotated.status).toBe(200)
      const fresh: string = rotated.json.secret
      expect(fresh).not.toBe(old)

      // In the overlap: two signatures in each scheme, and every library accepts either secret.
      const during = (yield* deliver(2))[1]!
      expect((during.headers["service-signature"] as string).split(",v1=").length).toBe(3)
      expect((during.headers["webhook-signature"] as string).split(" ").length).toBe(2)
      expect(acceptedBy(during, old)).toEqual(ALL)
      expect(acceptedBy(during, fresh)).toEqual(ALL)
      expect(acceptedBy(during, "whsec_dW5yZWxhdGVkLXVucmVsYXRlZC11bnJlbGF0ZWQtdW5yZWw=")).toEqual(NONE)

      // The overlap ends 60 s after the rotation, on the server's clock: from then on only the new secret.
      yield* TestClock.adjust("60 seconds")
      const after = (yield* deliver(3))[2]!
      expect(acceptedBy(after, fresh)).toEqual(ALL)
      expect(acceptedBy(after, old)).toEqual(NONE)
      expect(Number(after.headers["webhook-timestamp"]) - Number(during.headers["webhook-timestamp"])).toBeGreaterThanOrEqual(60)
    }), 30_000)

  it.scoped("a 503 with Retry-After holds the retry until then; a 410 disables the webhook at once (endpoint_gone)", () =>
    Effect.gen(function*() {
      const { attemptsLogged, call, deliver, receiver } = yield* setUp({
        reply: (request, n) =>
          request.path === "/gone" ? { status: 410, body: "gone" } : n === 1 ? { status: 503, headers: { "Retry-After": "120" }, body: "later" } : {}
      })
      const busy = yield* call("POST", "/api/v1/webhooks", { url: receiver.url, events: ["key.created"] })
      yield* deliver(1)
      expect((yield* attemptsLogged(busy.json.id, 1)).map((a) => a.status_code)).toEqual([503])
      // The schedule's first retry (30 s) is held back: the receiver asked for 120 s.
      yield* TestClock.adjust("30 seconds")
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 300)))
      expect((yield* receiver.received).length).toBe(1)
      yield* TestClock.adjust("90 seconds")
      const [first, retry] = yield* within("the retry", receiver.waitFor(2))
      expect(JSON.parse(retry!.rawBody.toString("utf8")).id).toBe(JSON.parse(first!.rawBody.toString("utf8")).id)
      expect(Number(retry!.headers["webhook-timestamp"]) - Number(first!.headers["webhook-timestamp"])).toBe(120)
      expect((yield* attemptsLogged(busy.json.id, 2)).map((a) => a.status_code)).toEqual([503, 200])

      yield* call("PATCH", `/api/v1/webhooks/${busy.json.id}`, { active: false })
      const gone = yield* call("POST", "/api/v1/webhooks", { url: receiver.url.replace("/webhook", "/gone"), events: ["key.created"] })
      yield* deliver(3)
      const disabled = yield* Effect.promise(() =>
        eventually(async () => {
          const got = await Effect.runPromise(call("GET", `/api/v1/webhooks/${gone.json.id}`))
          return got.json.active === false ? got.json : undefined
        }))
      expect(disabled.disabled_reason).toBe("endpoint_gone")
      // Nothing more is sent to it: no retry, no new event, through the whole retry schedule.
      expect((yield* call("POST", "/api/v1/keys", { name: "unheard" })).status).toBe(201)
      yield* TestClock.adjust("9 hours")
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 300)))
      expect((yield* receiver.received).filter((r) => r.path === "/gone").length).toBe(1)
    }), 30_000)
})
