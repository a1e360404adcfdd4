import { describe, expect, it } from "@effect/vitest"
import type { TransportFailure, WebhookResponse } from "@mzk/core"
import { startWebhookReceiver } from "@mzk/testkit"
import { Effect, Either } from "effect"
import { createServer } from "node:net"
import { makeNodeWebhookTransport, type Resolver } from "../../src/webhookTransport.js"

const post = (url: string, timeoutMs = 5_000) => ({
  url,
  headers: { "Content-Type": "application/json", "Service-Signature": "t=1,v1=00" },
  body: JSON.stringify({ id: "evt_1" }),
  timeoutMs
})

/** A resolver with fixed answers that counts its calls. */
const fakeResolver = (answers: Readonly<Record<string, ReadonlyArray<string>>>) => {
  const calls: Array<string> = []
  const resolve: Resolver = async (host) => {
    calls.push(host)
    const found = answers[host]
    if (found === undefined) throw Object.assign(new Error("not found"), { code: "ENOTFOUND" })
    return found.map((address) => ({ address, family: address.includes(":") ? 6 as const : 4 as const }))
  }
  return { resolve, calls }
}

const sendWith = (options: Parameters<typeof makeNodeWebhookTransport>[0], url: string, timeoutMs?: number) =>
  Effect.acquireUseRelease(
    Effect.sync(() => makeNodeWebhookTransport(options)),
    (made) => Effect.either(made.transport.send(post(url, timeoutMs))),
    (made) => Effect.sync(made.close)
  )

const failedWith = (result: Either.Either<WebhookResponse, TransportFailure>) =>
  Either.isLeft(result) ? result.left.reason : `status ${result.right.status}`

describe("Node webhook transport", () => {
  it.scopedLive("refuses non-public IP literals before opening any connection", () =>
    Effect.gen(function*() {
      const receiver = yield* startWebhookReceiver()
      const dns = fakeResolver({})
      const urls = [
        "https://127.0.0.1/",
        "https://[::1]/",
        "https://10.0.0.5/",
        "https://169.254.169.254/latest/meta-data",
        "https://[::ffff:127.0.0.1]/",
        `https://127.0.0.1:${receiver.port}/webhook`,
        `https://[::ffff:7f00:1]:${receiver.port}/webhook`
      ]
      for (const url of urls) expect(failedWith(yield* sendWith({ resolver: dns.resolve }, url)), url).toBe("blocked_address")
      expect(dns.calls).toEqual([])
      expect(yield* receiver.received).toEqual([])
    }))

  it.scopedLive("refuses a host name whose resolver answer is private, or partly private", () =>
    Effect.gen(function*() {
      const receiver = yield* startWebhookReceiver()
      const dns = fakeResolver({
        "internal.example.com": ["10.1.2.3"],
        "rebind.example.com": ["93.184.216.34", "127.0.0.1"],
        "v6.example.com": ["fd00::1"],
        "here.example.com": ["127.0.0.1"]
      })
      for (const host of ["internal.example.com", "rebind.example.com", "v6.example.com"]) {
        expect(failedWith(yield* sendWith({ resolver: dns.resolve }, `https://${host}/hook`)), host).toBe("blocked_address")
      }
      // Reachable on loopback, refused because of that.
      expect(failedWith(yield* sendWith({ resolver: dns.resolve, allowInsecure: false }, `https://here.example.com:${receiver.port}/webhook`)))
        .toBe("blocked_address")
      expect(failedWith(yield* sendWith({ resolver: dns.resolve }, "https://nowhere.example.com/"))).toBe("dns")
      expect(yield* receiver.received).toEqual([])
    }))

  it.scopedLive("connects to the address it checked, once resolved, and keeps the host name in Host", () =>
    Effect.gen(function*() {
      const receiver = yield* startWebhookReceiver({ reply: () => ({ status: 202, body: "accepted" }) })
      const dns = fakeResolver({ "hooks.example.test": ["127.0.0.1"] })
      const result = yield* sendWith({ resolver: dns.resolve, allowInsecure: true }, `http://hooks.example.test:${receiver.port}/webhook?x=1`)
      expect(result).toEqual(Either.right({ status: 202, body: "accepted" }))
      expect(dns.calls).toEqual(["hooks.example.test"])
      const [received] = yield* receiver.received
      expect(received!.method).toBe("POST")
      expect(received!.path).toBe("/webhook?x=1")
      expect(received!.headers.host).toBe(`hooks.example.test:${receiver.port}`)
      expect(received!.headers["content-type"]).toBe("application/json")
      expect(received!.headers["service-signature"]).toBe("t=1,v1=00")
      expect(received!.rawBody.toString()).toBe(JSON.stringify({ id: "evt_1" }))
    }))

  it.scopedLive("refuses http:// unless insecure mode is on", () =>
    Effect.gen(function*() {
      const dns = fakeResolver({ "hooks.example.com": ["93.184.216.34"] })
      expect(failedWith(yield* sendWith({ resolver: dns.resolve }, "http://hooks.example.com/"))).toBe("invalid_url")
      expect(failedWith(yield* sendWith({ resolver: dns.resolve }, "ftp://hooks.example.com/"))).toBe("invalid_url")
      expect(dns.calls).toEqual([])
    }))

  it.scopedLive("does not follow redirects: the 3xx is the answer", () =>
    Effect.gen(function*() {
      const receiver = yield* startWebhookReceiver({
        reply: () => ({ status: 302, headers: { location: "/elsewhere" }, body: "moved" })
      })
      const result = yield* sendWith({ allowInsecure: true }, receiver.url)
      expect(result).toEqual(Either.right({ status: 302, body: "moved" }))
      expect((yield* receiver.received).length).toBe(1)
    }))

  it.scopedLive("passes on the answer's Retry-After, as sent, for the engine to read", () =>
    Effect.gen(function*() {
      const receiver = yield* startWebhookReceiver({
        reply: (_, n) => (n === 1 ? { status: 503, headers: { "Retry-After": "120" }, body: "" } : { status: 429, headers: { "retry-after": "Wed, 21 Oct 2026 07:28:00 GMT" }, body: "" })
      })
      expect(yield* sendWith({ allowInsecure: true }, receiver.url)).toEqual(Either.right({ status: 503, body: "", retryAfter: "120" }))
      expect(yield* sendWith({ allowInsecure: true }, receiver.url))
        .toEqual(Either.right({ status: 429, body: "", retryAfter: "Wed, 21 Oct 2026 07:28:00 GMT" }))
    }))

  it.scopedLive("reads at most 4 KiB of the response body", () =>
    Effect.gen(function*() {
      const receiver = yield* startWebhookReceiver({ reply: () => ({ status: 500, body: "x".repeat(200_000) }) })
      const result = yield* sendWith({ allowInsecure: true }, receiver.url)
      expect(Either.isRight(result) && [result.right.status, result.right.body.length]).toEqual([500, 4096])
    }))

  it.scopedLive("gives up after the request's timeout when the endpoint hangs", () =>
    Effect.gen(function*() {
      const receiver = yield* startWebhookReceiver({ reply: () => ({ hang: true }) })
      const started = Date.now()
      const result = yield* sendWith({ allowInsecure: true }, receiver.url, 300)
      expect(failedWith(result)).toBe("timeout")
      // Not before the request's 300 ms, and by the request's timer: the endpoint never answers, so
      // only a timer ends the wait, and the next one along would be the 5 s of \`post\`'s default
      // (a bound a loaded machine cannot reach, unlike a tight one on the 300 ms).
      const waited = Date.now() - started
      expect(waited).toBeGreaterThanOrEqual(290)
      expect(waited).toBeLessThan(5_000)
    }))

  it.scopedLive("classifies refused connections and TLS failures", () =>
    Effect.gen(function*() {
      // A port that was just free: nothing listens there.
      const port = yield* Effect.async<number>((resume) => {
        const probe = createServer()
        probe.listen(0, "127.0.0.1", () => {
          const { port } = probe.address() as { port: number }
          probe.close(() => resume(Effect.succeed(port)))
        })
      })
      expect(failedWith(yield* sendWith({ allowInsecure: true }, `http://127.0.0.1:${port}/`))).toBe("connection")
      // TLS spoken to a plain HTTP server.
      const receiver = yield* startWebhookReceiver()
      expect(failedWith(yield* sendWith({ allowInsecure: true }, `https://127.0.0.1:${receiver.port}/webhook`))).toBe("tls")
    }))
})
