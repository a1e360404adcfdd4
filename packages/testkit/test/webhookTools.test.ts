import { describe, expect, it } from "@effect/vitest"
import { signatureHeader, WebhookTransport } from "@mzk/core"
import { makeScriptedTransport, startWebhookReceiver, verifyWebhookSignature, WebhookSignatureError } from "@mzk/testkit"
import { WebhookVerificationError } from "@mzk/webhooks"
import { Effect, Either, Fiber, TestClock } from "effect"
import { createHmac } from "node:crypto"

const secret = "whsec_dGVzdC1zZWNyZXQtdGVzdC1zZWNyZXQtdGVzdC1zZWNyZXQ="
const body = JSON.stringify({ id: "evt_01", type: "key.created", created_at: "2026-11-22T10:00:00.000Z", data: { name: "ü" } })
const NOW = Date.UTC(2026, 10, 22, 10, 0)
const t = Math.floor(NOW / 1000)

const reasonOf = (run: () => unknown) => {
  try {
    run()
    return "accepted"
  } catch (error) {
    expect(error).toBeInstanceOf(WebhookSignatureError)
    return (error as WebhookSignatureError).reason
  }
}

describe("verifyWebhookSignature (the @mzk/webhooks rule, with the reason for assertions)", () => {
  it("accepts the header the service sends, with the body as a string or as bytes", () => {
    const header = signatureHeader(secret, t, body)
    expect(verifyWebhookSignature(body, header, secret, { now: NOW })).toEqual({ timestamp: t })
    expect(verifyWebhookSignature(Buffer.from(body), header, secret, { now: new Date(NOW + 300_000) })).toEqual({ timestamp: t })
  })

  it("accepts any one of several v1 values, as during a secret rotation", () => {
    const good = createHmac("sha256", secret).update(`${t}.${body}`).digest("hex")
    expect(reasonOf(() => verifyWebhookSignature(body, `t=${t}, v1=${"0".repeat(64)}, v1=${good}`, secret, { now: NOW }))).toBe("accepted")
  })

  it("names the cause of every refusal", () => {
    const header = signatureHeader(secret, t, body)
    const v1 = header.split("v1=")[1]!
    const cases: ReadonlyArray<readonly [string, () => unknown]> = [
      ["missing_header", () => verifyWebhookSignature(body, undefined, secret, { now: NOW })],
      ["missing_header", () => verifyWebhookSignature(body, "", secret, { now: NOW })],
      ["malformed_header", () => verifyWebhookSignature(body, `v1=${v1}`, secret, { now: NOW })],
      ["malformed_header", () => verifyWebhookSignature(body, `t=${t}`, secret, { now: NOW })],
      ["malformed_header", () => verifyWebhookSignature(body, `t=${t},v0=${v1}`, secret, { now: NOW })],
      ["malformed_header", () => verifyWebhookSignature(body, `t=soon,v1=${v1}`, secret, { now: NOW })],
      ["signature_mismatch", () => verifyWebhookSignature(body.replace("ü", "u"), header, secret, { now: NOW })],
      ["signature_mismatch", () => verifyWebhookSignature(body, header, secret.replace("dGVz", "eGVz"), { now: NOW })],
      ["signature_mismatch", () => verifyWebhookSignature(body, `t=${t + 1},v1=${v1}`, secret, { now: NOW })],
      ["signature_mismatch", () => verifyWebhookSignature(body, `t=${t},v1=${v1.slice(0, 63)}`, secret, { now: NOW })],
      ["timestamp_too_old", () => verifyWebhookSignature(body, header, secret, { now: NOW + 301_000 })],
      ["timestamp_too_old", () => verifyWebhookSignature(body, header, secret, { now: NOW + 11_000, toleranceSeconds: 10 })],
      ["timestamp_in_future", () => verifyWebhookSignature(body, header, secret, { now: NOW - 301_000 })]
    ]
    for (const [reason, run] of cases) expect(reasonOf(run), reason).toBe(reason)
    // Code written against @mzk/webhooks catches the testkit's error too.
    expect(() => verifyWebhookSignature(body, undefined, secret)).toThrow(WebhookVerificationError)
    expect(reasonOf(() => verifyWebhookSignature(body, header, secret, { now: NOW + 300_999 }))).toBe("accepted")
  })
})

describe("scripted transport", () => {
  it.effect("answers per URL and attempt, repeats the last answer, and delays on the Clock", () =>
    Effect.gen(function*() {
      const scripted = yield* makeScriptedTransport({
        "https://a.example.com/": [{ status: 500 }, { error: "timeout" }, { status: 200, body: "fine", delay: "2 seconds" }],
        "https://b.example.com/": (n) => ({ status: 200 + n })
      })
      const send = (url: string) =>
        Effect.either(Effect.flatMap(WebhookTransport, (transport) => transport.send({ url, headers: {}, body: "{}", timeoutMs: 10_000 })))
          .pipe(Effect.provide(scripted.layer))
      expect(yield* send("https://a.example.com/")).toEqual(Either.right({ status: 500, body: "" }))
      expect(Either.isLeft(yield* send("https://a.example.com/"))).toBe(true)
      const slow = yield* Effect.fork(send("https://a.example.com/"))
      yield* TestClock.adjust("1 second")
      expect(slow.unsafePoll()).toBe(null)
      yield* TestClock.adjust("1 second")
      expect(yield* Fiber.join(slow)).toEqual(Either.right({ status: 200, body: "fine" }))
      expect(yield* send("https://b.example.com/")).toEqual(Either.right({ status: 201, body: "" }))
      expect(yield* send("https://unknown.example.com/")).toEqual(Either.right({ status: 200, body: "ok" }))
      expect((yield* scripted.requestsTo("https://a.example.com/")).map((r) => [r.n, r.at_ms])).toEqual([[1, 0], [2, 0], [3, 0]])
    }))
})

describe("webhook receiver", () => {
  it.scopedLive("records raw bodies and headers, answers as told, and waits for requests", () =>
    Effect.gen(function*() {
      const receiver = yield* startWebhookReceiver({ reply: (_, n) => ({ status: n === 1 ? 500 : 204, body: "" }) })
      expect(receiver.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/webhook$/)
      const waiting = yield* Effect.fork(receiver.waitFor(2))
      const first = yield* Effect.promise(() => fetch(receiver.url, { method: "POST", body: "ünï", headers: { "x-test": "1" } }))
      const second = yield* Effect.promise(() => fetch(receiver.url, { method: "POST", body: "two" }))
      expect([first.status, second.status]).toEqual([500, 204])
      const received = yield* Fiber.join(waiting)
      expect(received.map((r) => r.rawBody.toString("utf8"))).toEqual(["ünï", "two"])
      expect(received[0]!.headers["x-test"]).toBe("1")
    }))
})
