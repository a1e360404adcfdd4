import { expect, it } from "@effect/vitest"
import { createClient, MzkApiError, type MzkClient } from "@mzk/client"
import { Accounts, ApiKeys } from "@mzk/core"
import { type ReceivedWebhook, startWebhookReceiver } from "@mzk/testkit"
import { constructEvent, type MzkEvent, WebhookVerificationError } from "@mzk/webhooks"
import { Effect, Redacted } from "effect"
import { describe } from "vitest"
import { startServer } from "../../server/test/realServer.js"

/** The rejection of `promise`, which must be an `MzkApiError`. */
const apiError = async (promise: Promise<unknown>): Promise<MzkApiError> => {
  try {
    await promise
  } catch (error) {
    expect(error).toBeInstanceOf(MzkApiError)
    return error as MzkApiError
  }
  throw new Error("expected the call to fail")
}

const signatureOf = (request: ReceivedWebhook) => request.headers["service-signature"] as string | undefined

const codeOf = (run: () => unknown) => {
  try {
    run()
    return "accepted"
  } catch (error) {
    expect(error).toBeInstanceOf(WebhookVerificationError)
    return (error as WebhookVerificationError).code
  }
}

/** A server on a real port (with the background loops and the real prover if `workers`), and an account's first key. */
const serverWithKey = (workers: boolean) => Effect.gen(function*() {
  const { baseUrl, context } = yield* startServer({ allowInsecureWebhooks: true, workers })
  const account = yield* Effect.flatMap(Accounts, (a) => a.create({ name: "Client journey" })).pipe(Effect.provide(context))
  // The first key comes from `mzk accounts create` in real use; here from the server's own core.
  const first = yield* Effect.flatMap(ApiKeys, (k) => k.create(account.id, { name: "bootstrap" })).pipe(Effect.provide(context))
  return { baseUrl, account: account.id, bootstrap: Redacted.value(first.secret) }
})

describe("@mzk/client and @mzk/webhooks against a real server", () => {
  it.scopedLive("key → webhook → proof → signed events → verify → calldata → circuits → errors", () =>
    Effect.gen(function*() {
      const received: Array<ReceivedWebhook> = []
      const receiver = yield* startWebhookReceiver({ onRequest: (request) => void received.push(request) })
      const { account, baseUrl, bootstrap } = yield* serverWithKey(true)
      const admin = createClient({ baseUrl, apiKey: bootstrap })
      const run = <A>(f: () => Promise<A>) => Effect.promise(f)

      // Keys
      const ciKey = yield* run(() => admin.keys.create({ name: "ci-pipeline", description: "CI", scopes: ["proofs:write", "proofs:read", "webhooks:write", "webhooks:read", "circuits:read", "circuits:write"] }))
      expect(ciKey).toMatchObject({ name: "ci-pipeline", description: "CI", last_used_at: null })
      expect(ciKey.key).toMatch(/^mzk_/)
      const keys = yield* run(() => admin.keys.list())
      expect(keys.limit).toBe(10)
      expect(keys.keys.map((k) => k.name)).toEqual(["ci-pipeline", "bootstrap"])
      expect(keys.keys.some((k) => "key" in k)).toBe(false)
      // The base URL may be given with the API's prefix, and with a trailing slash.
      const ci: MzkClient = createClient({ baseUrl: `${baseUrl}/api/v1/`, apiKey: ciKey.key! })

      // Webhooks
      const webhook = yield* run(() => ci.webhooks.create({ url: receiver.url, events: ["proof.completed", "proof.verified", "circuit.failed"], description: "journey" }))
      expect(webhook).toMatchObject({ url: receiver.url, active: true, disabled_reason: null, description: "journey" })
      expect(webhook.secret).toMatch(/^whsec_/)
      expect(yield* run(() => ci.webhooks.get(webhook.id))).not.toHaveProperty("secret")
      const updated = yield* run(() => ci.webhooks.update(webhook.id, { description: "the journey's" }))
      expect(updated.description).toBe("the journey's")
      expect(yield* run(() => ci.webhooks.list({ limit: 5 }))).toMatchObject({ total: 1, has_more: false, webhooks: [{ id: webhook.id }] })

      // Circuits
      const circuits = yield* run(() => ci.circuits.list())
      expect(circuits.circuits.map((c) => c.name)).toEqual(expect.arrayContaining(["multiplier", "range", "hash_preimage", "merkle_membership"]))
      const multiplier = yield* run(() => ci.circuits.get("multiplier"))
      expect(multiplier).toMatchObject({ name: "multiplier", owner: "builtin", status: "ready", public_signals: ["c"] })
      expect(multiplier.verification_key).toMatchObject({ protocol: "groth16", curve: "bn128" })
      expect(yield* run(() => ci.circuits.verifier("multiplier"))).toMatch(/pragma solidity[\s\S]*function verifyProof/)

      // A proof: queued with the rate limits, completed, announced by a signed event
      const proof = yield* run(() => ci.proofs.create({ type: "multiplier", inputs: { a: 3, b: "11" } }))
      expect(proof).toMatchObject({ type: "multiplier", status: "queued" })
      expect(proof.rateLimit).toEqual({
        policies: [{ name: "key", limit: 60, windowSeconds: 60 }, { name: "daily", limit: 5000, windowSeconds: 86400 }],
        policy: "key",
        remaining: 59,
        resetSeconds: expect.any(Number)
      })
      // The rate limits ride beside the body, not in it.
      expect(Object.keys(proof)).not.toContain("rateLimit")
      expect(JSON.parse(JSON.stringify(proof))).toEqual({ ...proof })
      const completed = yield* run(() => ci.proofs.wait(proof.proof_id, { timeoutMs: 60_000, intervalMs: 100 }))
      expect(completed).toMatchObject({ status: "completed", public_inputs: { c: "33" }, error: null })

      const [completedDelivery] = yield* receiver.waitFor(1).pipe(Effect.timeout("60 seconds"))
      const event: MzkEvent = constructEvent(completedDelivery!.rawBody, signatureOf(completedDelivery!), webhook.secret)
      expect(event.type).toBe("proof.completed")
      if (event.type !== "proof.completed") return expect.unreachable()
      expect(event.data).toEqual({
        proof_id: proof.proof_id,
        circuit: "multiplier",
        circuit_version: 1,
        proving_system: "groth16",
        status: "completed",
        proof_blob: completed.proof_blob,
        public_inputs: { c: "33" },
        duration_ms: completed.duration_ms,
        created_at: completed.created_at,
        metadata: {}
      })
      expect(event.id).toMatch(/^evt_/)
      // A real delivery, altered, replayed late, or checked with another secret, is refused.
      const raw = completedDelivery!.rawBody
      const header = signatureOf(completedDelivery!)
      const signedAt = Number(/t=(\d+)/.exec(header ?? "")![1])
      const tampered = Buffer.from(raw.toString("utf8").replace('"c":"33"', '"c":"34"'))
      expect(codeOf(() => constructEvent(tampered, header, webhook.secret))).toBe("signature_mismatch")
      expect(codeOf(() => constructEvent(JSON.stringify(JSON.parse(raw.toString("utf8")), null, 1), header, webhook.secret))).toBe("signature_mismatch")
      expect(codeOf(() => constructEvent(raw, header, webhook.secret, { now: (signedAt + 301) * 1000 }))).toBe("timestamp_out_of_tolerance")
      expect(codeOf(() => constructEvent(raw, header, `${webhook.secret}x`))).toBe("signature_mismatch")
      expect(codeOf(() => constructEvent(raw, undefined, webhook.secret))).toBe("missing_header")

      // Verify (metered), and its signed event
      const verification = yield* run(() => ci.proofs.verify(proof.proof_id))
      expect(verification).toMatchObject({ proof_id: proof.proof_id, circuit: "multiplier", valid: true })
      expect(verification.rateLimit).toMatchObject({ policy: "key", remaining: 58 })
      const [, verifiedDelivery] = yield* receiver.waitFor(2).pipe(Effect.timeout("30 seconds"))
      const verified = constructEvent(verifiedDelivery!.rawBody, signatureOf(verifiedDelivery!), webhook.secret)
      expect(verified).toMatchObject({ type: "proof.verified", data: { proof_id: proof.proof_id, valid: true, verified_at: verification.verified_at } })

      const calldata = yield* run(() => ci.proofs.calldata(proof.proof_id))
      expect(calldata.function).toBe("verifyProof(uint256[2],uint256[2][2],uint256[2],uint256[1])")
      expect(calldata.arguments[3]).toEqual(["33"])
      expect(calldata.calldata).toMatch(/^0x[0-9a-f]+$/)

      // A batch, and listing
      const batch = yield* run(() => ci.proofs.createBatch({ proofs: [{ type: "multiplier", inputs: { a: 2, b: 5 } }, { type: "multiplier", inputs: { a: 7, b: 6 } }] }))
      expect(batch.batch_id).toMatch(/^batch_/)
      expect(batch.proofs.map((p) => p.status)).toEqual(["queued", "queued"])
      expect(batch.rateLimit).toMatchObject({ policy: "key" })
      const settled = yield* run(() => Promise.all(batch.proofs.map((p) => ci.proofs.wait(p.proof_id, { intervalMs: 100 }))))
      expect(settled.map((p) => p.public_inputs)).toEqual([{ c: "10" }, { c: "42" }])
      const listed = yield* run(() => ci.proofs.list({ status: "completed", limit: 2 }))
      expect(listed).toMatchObject({ total: 3, has_more: true })
      // Newest first.
      expect(listed.proofs.map((p) => p.proof_id)).toEqual([batch.proofs[1]!.proof_id, batch.proofs[0]!.proof_id])
      const next = yield* run(() => ci.proofs.list({ status: "completed", starting_after: listed.proofs[1]!.proof_id }))
      expect(next.proofs.map((p) => p.proof_id)).toEqual([proof.proof_id])

      // Circom sources, from bytes and a Blob: refused at once, this server having no powers of tau,
      // with a message that says how to give it one
      const sources = yield* run(() => apiError(ci.circuits.create({
        name: "my_circuit",
        description: "uploaded by the client",
        main: { filename: "main.circom", content: new TextEncoder().encode('pragma circom 2.1.6;\ninclude "lib/double.circom";\ncomponent main = Double();\n') },
        sources: [{ filename: "lib/double.circom", content: new Blob(["pragma circom 2.1.6;\ntemplate Double() { signal input x; signal output y; y <== 2 * x; }\n"]) }]
      })))
      expect([sources.status, sources.code]).toEqual([409, "setup_unavailable"])
      expect(sources.message).toContain("createMzk")
      // Prebuilt artifacts need none: accepted as compiling, then failed (these bytes are no zkey),
      // announced by a signed, typed circuit.failed
      const upload = yield* run(() => ci.circuits.create({
        name: "my_circuit",
        description: "uploaded by the client",
        wasm: new TextEncoder().encode("\0asm"),
        zkey: new Blob(["not a zkey"]),
        sym: "1,1,0,main.y\n"
      }))
      expect(upload).toMatchObject({ name: "my_circuit", owner: account, status: "compiling", description: "uploaded by the client" })
      const taken = yield* run(() => apiError(ci.circuits.create({ name: "multiplier", wasm: "w", zkey: "z", sym: "s" })))
      expect([taken.status, taken.code]).toEqual([409, "circuit_name_taken"])
      const failedDelivery = yield* Effect.promise(async () => {
        for (let i = 0; i < 600; i++) {
          const found = received.find((r) => r.rawBody.toString("utf8").includes('"circuit.failed"'))
          if (found !== undefined) return found
          await new Promise((resolve) => setTimeout(resolve, 100))
        }
        throw new Error("no circuit.failed delivery")
      })
      const failedEvent = constructEvent(failedDelivery.rawBody, signatureOf(failedDelivery), webhook.secret)
      if (failedEvent.type !== "circuit.failed") return expect.unreachable()
      expect(failedEvent.data).toMatchObject({ name: "my_circuit", status: "failed", error: { code: expect.any(String), message: expect.any(String) } })
      const failedCircuit = yield* run(() => ci.circuits.get("my_circuit"))
      expect([failedCircuit.status, failedCircuit.error?.code]).toEqual(["failed", failedEvent.data.error.code])
      const notReady = yield* run(() => apiError(ci.circuits.verifier("my_circuit")))
      expect([notReady.status, notReady.code]).toEqual([409, "circuit_not_ready"])
      yield* run(() => ci.circuits.remove("my_circuit"))
      const gone = yield* run(() => apiError(ci.circuits.get("my_circuit")))
      expect([gone.status, gone.code]).toEqual([404, "circuit_not_found"])

      // The delivery log
      const log = yield* run(() => ci.webhooks.deliveries(webhook.id, { limit: 100 }))
      expect(new Set(log.deliveries.map((d) => `${d.outcome} ${d.status_code}`))).toEqual(new Set(["succeeded 200"]))
      expect(log.deliveries.map((d) => d.event_type).sort()).toEqual(["circuit.failed", "proof.completed", "proof.completed", "proof.completed", "proof.verified"])

      // Errors, as MzkApiError: 404, 400 with details, 409, 401, 429
      const missing = yield* run(() => apiError(ci.proofs.get("proof_01jd0000000000000000000000")))
      expect(missing).toMatchObject({ status: 404, code: "proof_not_found", details: undefined })
      expect(missing.requestId).toMatch(/^req_/)
      expect(missing.message).toMatch(/proof/i)
      const invalid = yield* run(() => apiError(ci.proofs.create({ type: "multiplier", inputs: { a: 3 } })))
      expect(invalid).toMatchObject({ status: 400, code: "invalid_request" })
      expect(invalid.details).toEqual(expect.arrayContaining([expect.objectContaining({ path: "inputs.b" })]))
      const badWebhook = yield* run(() => apiError(ci.webhooks.create({ url: receiver.url, events: [] })))
      expect(badWebhook).toMatchObject({ status: 400, code: "invalid_request", details: [expect.objectContaining({ path: "events" })] })
      const noRoute = yield* run(() => apiError(ci.webhooks.get("wh_01jd0000000000000000000000")))
      expect([noRoute.status, noRoute.code]).toEqual([404, "webhook_not_found"])

      for (let i = keys.total + 1; i <= 10; i++) yield* run(() => admin.keys.create({ name: `extra-${i}` }))
      const limit = yield* run(() => apiError(admin.keys.create({ name: "one-too-many" })))
      expect([limit.status, limit.code]).toEqual([409, "key_limit_reached"])
      const unknownKey = yield* run(() => apiError(admin.keys.revoke("key_01jd0000000000000000000000")))
      expect([unknownKey.status, unknownKey.code]).toEqual([404, "key_not_found"])

      const scoped = yield* run(() => apiError(createClient({ baseUrl, apiKey: ciKey.key! }).keys.list()))
      expect([scoped.status, scoped.code]).toEqual([403, "insufficient_scope"])

      // No more events for the rate-limit loop below.
      yield* run(() => ci.webhooks.remove(webhook.id))
      const removed = yield* run(() => apiError(ci.webhooks.get(webhook.id)))
      expect(removed.code).toBe("webhook_not_found")

      let tooMany: MzkApiError | undefined
      for (let i = 0; i < 130 && tooMany === undefined; i++) {
        tooMany = yield* run(() => ci.proofs.verify(proof.proof_id).then(() => undefined, (error: unknown) => error as MzkApiError))
      }
      expect(tooMany).toBeInstanceOf(MzkApiError)
      expect(tooMany).toMatchObject({ status: 429, code: "rate_limit_exceeded" })
      expect(tooMany!.retryAfterSeconds).toBeGreaterThan(0)
      expect(tooMany!.rateLimit).toMatchObject({ policy: "key", remaining: 0 })

      yield* run(() => admin.keys.revoke(ciKey.id))
      const revoked = yield* run(() => apiError(ci.proofs.get(proof.proof_id)))
      expect([revoked.status, revoked.code]).toEqual([401, "invalid_api_key"])
    }), 180_000)

  it.scopedLive("creates are safe to retry with idempotencyKey: the same answer, nothing made twice, another body refused", () =>
    Effect.gen(function*() {
      const { baseUrl, bootstrap } = yield* serverWithKey(false)
      const client = createClient({ baseUrl, apiKey: bootstrap })
      const idempotencyKey = crypto.randomUUID()
      const input = { type: "multiplier", inputs: { a: 4, b: 5 } }
      const first = yield* Effect.promise(() => client.proofs.create(input, { idempotencyKey }))
      const retry = yield* Effect.promise(() => client.proofs.create(input, { idempotencyKey }))
      expect(retry.proof_id).toBe(first.proof_id)
      expect((yield* Effect.promise(() => client.proofs.list())).total).toBe(1)
      const reused = yield* Effect.promise(() => apiError(client.proofs.create({ ...input, inputs: { a: 5, b: 4 } }, { idempotencyKey })))
      expect([reused.status, reused.code]).toEqual([422, "idempotency_key_reused"])
      const hook = { url: "https://hooks.example.com/client", events: ["proof.completed" as const] }
      const webhook = yield* Effect.promise(() => client.webhooks.create(hook, { idempotencyKey: "hook-once" }))
      expect((yield* Effect.promise(() => client.webhooks.create(hook, { idempotencyKey: "hook-once" }))).secret).toBe(webhook.secret)
      expect((yield* Effect.promise(() => client.webhooks.list())).webhooks).toHaveLength(1)
    }))

  it.scopedLive("no answer is an MzkApiError too: network_error, timeout", () =>
    Effect.gen(function*() {
      const { baseUrl, bootstrap } = yield* serverWithKey(false)
      const closed = yield* Effect.promise(() => apiError(createClient({ baseUrl: "http://127.0.0.1:1", apiKey: bootstrap }).keys.list()))
      expect(closed).toMatchObject({ status: 0, code: "network_error" })
      expect(closed.cause).toBeDefined()
      const hanging = createClient({ baseUrl, apiKey: bootstrap, timeoutMs: 50, fetch: (url, init) => new Promise((_, reject) => init.signal?.addEventListener("abort", () => reject(init.signal?.reason))) })
      const late = yield* Effect.promise(() => apiError(hanging.keys.list()))
      expect(late).toMatchObject({ status: 0, code: "timeout" })
    }))
})
