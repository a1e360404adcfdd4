import { describe, expect, it } from "@effect/vitest"
import {
  Accounts,
  ApiKeys,
  DEFAULT_WEBHOOK_CONFIG,
  DeliveryEngine,
  type EventEnvelope,
  HostResolver,
  WebhookConfig,
  Webhooks
} from "@mzk/core"
import { startWebhookReceiver, testCore, verifyWebhookSignature } from "@mzk/testkit"
import { Effect, Layer, Redacted } from "effect"
import { NodeWebhookTransport, type Resolver } from "../../src/webhookTransport.js"

const engineOver = (transport: Layer.Layer<import("@mzk/core").WebhookTransport>) =>
  DeliveryEngine.layer.pipe(Layer.provide(transport), Layer.provideMerge(testCore()))

/** Polls (in real time) until `check` holds; the engine runs in the background. */
const eventually = <A, E, R>(effect: Effect.Effect<A, E, R>, check: (a: A) => boolean) =>
  Effect.gen(function*() {
    for (let i = 0; i < 200; i++) {
      const value = yield* effect
      if (check(value)) return value
      yield* Effect.sleep("20 millis")
    }
    return yield* Effect.dieMessage("condition not reached within 4 s")
  })

describe("webhook delivery end to end", () => {
  it.scopedLive("a real HTTP delivery verifies with the receiver helper; tampering, a wrong secret and a stale timestamp do not", () =>
    Effect.gen(function*() {
      const receiver = yield* startWebhookReceiver()
      const account = (yield* (yield* Accounts).create({ name: "Acme" })).id
      const created = yield* (yield* Webhooks).create(account, { url: receiver.url, events: ["key.created"] })
      const secret = Redacted.value(created.secret)
      const key = yield* (yield* ApiKeys).create(account, { name: "deploy" })
      const [request] = yield* receiver.waitFor(1)
      const raw = request!.rawBody
      const header = request!.headers["service-signature"] as string
      expect(request!.headers["content-type"]).toBe("application/json")
      expect(request!.headers["user-agent"]).toBe(DEFAULT_WEBHOOK_CONFIG.userAgent)
      expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/)

      const { timestamp } = verifyWebhookSignature(raw, header, secret)
      expect(Math.abs(timestamp - Date.now() / 1000)).toBeLessThan(5)
      const envelope = JSON.parse(raw.toString("utf8")) as EventEnvelope
      expect(Object.keys(envelope)).toEqual(["id", "type", "created_at", "data"])
      expect(envelope.id).toMatch(/^evt_/)
      expect(envelope.type).toBe("key.created")
      expect(envelope.data).toMatchObject({ id: key.api_key.id, name: "deploy" })
      expect(raw.toString("utf8")).not.toContain(Redacted.value(key.secret))

      const reason = (run: () => unknown) => {
        try {
          run()
          return "accepted"
        } catch (error) {
          return (error as { reason: string }).reason
        }
      }
      const tampered = Buffer.from(raw.toString("utf8").replace("deploy", "depl0y"))
      expect(reason(() => verifyWebhookSignature(tampered, header, secret))).toBe("signature_mismatch")
      expect(reason(() => verifyWebhookSignature(raw, header, `${secret.slice(0, -2)}A=`))).toBe("signature_mismatch")
      expect(reason(() => verifyWebhookSignature(raw, header, secret, { now: (timestamp + 301) * 1000 }))).toBe("timestamp_too_old")
      expect(reason(() => verifyWebhookSignature(raw, header, secret, { now: (timestamp + 300) * 1000 }))).toBe("accepted")

      const log = yield* eventually(
        (yield* Webhooks).listDeliveryAttempts(account, created.webhook.id),
        (l) => l.total === 1
      )
      expect(log.attempts.map((a) => [a.event_id, a.attempt, a.outcome, a.status_code, a.response_body])).toEqual([
        [envelope.id, 1, "succeeded", 200, "ok"]
      ])
    }).pipe(
      Effect.provide(engineOver(NodeWebhookTransport({ allowInsecure: true }))),
      Effect.provideService(WebhookConfig, { ...DEFAULT_WEBHOOK_CONFIG, allowInsecureWebhooks: true })
    ))

  it.scopedLive("a host that resolved publicly at create but privately at delivery is refused and nothing is sent", () => {
    // At create the name answers with a public address; by delivery time it answers 127.0.0.1.
    const atDelivery: Resolver = async () => [{ address: "127.0.0.1", family: 4 }]
    return Effect.gen(function*() {
      const receiver = yield* startWebhookReceiver()
      const account = (yield* (yield* Accounts).create({ name: "Acme" })).id
      const created = yield* (yield* Webhooks).create(account, {
        url: `https://rebind.example.com:${receiver.port}/webhook`,
        events: ["key.created"]
      })
      yield* (yield* ApiKeys).create(account, { name: "deploy" })
      const log = yield* eventually(
        (yield* Webhooks).listDeliveryAttempts(account, created.webhook.id),
        (l) => l.total === 1
      )
      expect(log.attempts.map((a) => [a.outcome, a.error, a.status_code])).toEqual([["failed", "blocked_address", null]])
      expect(yield* receiver.received).toEqual([])
    }).pipe(
      Effect.provide(engineOver(NodeWebhookTransport({ resolver: atDelivery }))),
      Effect.provideService(HostResolver, { resolve: () => Effect.succeed(["93.184.216.34"]) })
    )
  })
})
