import { Accounts, ApiKeys } from "@mzk/core"
import { makeHttpClient, startWebhookReceiver, verifyWebhookSignature } from "@mzk/testkit"
import { expect, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { describe } from "vitest"
import { DEV_PTAU_POWER, settle, SPIN, spinningProof, tempDir, uploadCircuit } from "../circuits/circuits.js"
import { startServer } from "../realServer.js"

describe("cancel with the real prover, over a real port", () => {
  it.scopedLive("a running proof's prover thread is released at once: the one thread of the pool proves the next proof", () =>
    Effect.gen(function*() {
      const receiver = yield* startWebhookReceiver()
      // One prover thread, and a proof timeout of 10 minutes: only the cancel can free the thread in time.
      const { baseUrl, context } = yield* startServer({
        allowInsecureWebhooks: true,
        workers: true,
        proverThreads: 1,
        proofs: { timeoutMs: 600_000 },
        circuits: { developmentPtau: { power: DEV_PTAU_POWER, dir: yield* tempDir("ptau") }, cacheDir: yield* tempDir("cache") }
      })
      const token = yield* Effect.gen(function*() {
        const account = yield* Effect.flatMap(Accounts, (a) => a.create({ name: "Spinner" }))
        return Redacted.value((yield* Effect.flatMap(ApiKeys, (k) => k.create(account.id, { name: "tests" }))).secret)
      }).pipe(Effect.provide(context))
      const api = makeHttpClient(baseUrl, { token })
      const call = (method: string, path: string, body?: unknown) => Effect.promise(() => api.send(method, path, body === undefined ? {} : { body }))
      const webhook = yield* call("POST", "/api/v1/webhooks", { url: receiver.url, events: ["proof.canceled"] })
      expect(webhook.status).toBe(201)

      const uploaded = yield* Effect.promise(() => uploadCircuit(baseUrl, token, "spin", SPIN))
      expect(uploaded.status).toBe(202)
      const ready = yield* Effect.promise(() => settle(api, "/api/v1/circuits/spin", (c) => c.status !== "compiling", 90_000))
      expect(ready).toMatchObject({ status: "ready", public_signals: ["b"] })

      const spinning = yield* spinningProof(api)
      const id = spinning.proof_id

      const canceled = yield* call("POST", `/api/v1/proofs/${id}/cancel`)
      expect(canceled.status).toBe(200)
      expect(canceled.json).toMatchObject({ proof_id: id, status: "canceled", proof_blob: null, completed_at: null })
      const canceledAt = Date.now()

      // The pool's only thread was busy for hours: a proof now completes only if it was released.
      const next = yield* call("POST", "/api/v1/proofs", { type: "multiplier", inputs: { a: 3, b: 11 } })
      const done = yield* Effect.promise(() => settle(api, `/api/v1/proofs/${next.json.proof_id}`, (p) => p.status === "completed" || p.status === "failed", 60_000))
      expect(done).toMatchObject({ status: "completed", public_inputs: { c: "33" } })
      console.log(`canceled a running real proof; the next proof completed ${Date.now() - canceledAt} ms after the cancel`)
      expect(Date.now() - canceledAt).toBeLessThan(60_000)
      expect((yield* call("GET", `/api/v1/proofs/${id}`)).json).toEqual(canceled.json)

      // The signed proof.canceled delivery.
      const [delivery] = yield* receiver.waitFor(1).pipe(Effect.timeout("30 seconds"))
      verifyWebhookSignature(delivery!.rawBody, delivery!.headers["service-signature"] as string, webhook.json.secret)
      expect(JSON.parse(delivery!.rawBody.toString("utf8"))).toMatchObject({
        type: "proof.canceled",
        data: { proof_id: id, circuit: "spin", status: "canceled", canceled_at: canceled.json.canceled_at, created_at: spinning.created_at }
      })
      const metrics = (yield* Effect.promise(() => makeHttpClient(baseUrl).send("GET", "/metrics"))).text
      expect(metrics).toContain('mzk_proofs_total{status="canceled",circuit="uploaded"} 1')
    }), 180_000)
})
