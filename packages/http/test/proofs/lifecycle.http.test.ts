import { verifyWebhookSignature } from "@mzk/testkit"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ISO } from "../helpers.js"
import { makeLiveHarness } from "../liveHarness.js"
import { expectEnvelope } from "../support.js"

/** The HTTP API with the proof worker and the delivery engine running: states past `queued`. */

const OK_URL = "https://ok.example.com/hook"
const FAILING_URL = "https://failing.example.com/hook"

let h: Awaited<ReturnType<typeof makeLiveHarness>>
beforeAll(async () => {
  h = await makeLiveHarness({ [FAILING_URL]: [{ status: 500, body: "nope" }] })
})
afterAll(() => h.close())

const settled = (token: string, id: string) =>
  h.eventually(async () => {
    const reply = await h.call("GET", `/api/v1/proofs/${id}`, { token })
    return reply.json.status === "queued" || reply.json.status === "running" ? undefined : reply
  })

describe("proofs past queued", () => {
  it("a proof completes; verify is 200 {proof_id, circuit, valid, verified_at} with the RateLimit headers", async () => {
    const { key } = await h.newAccount()
    const created = await h.call("POST", "/api/v1/proofs", { token: key, body: { type: "multiplier", inputs: { a: 3, b: 11 } } })
    expect(created.status).toBe(202)
    const id = created.json.proof_id as string
    const done = await settled(key, id)
    expect(done.json).toMatchObject({ proof_id: id, status: "completed", error: null, public_inputs: { c: "33" } })
    expect(typeof done.json.proof_blob).toBe("string")
    expect(Number.isInteger(done.json.duration_ms)).toBe(true)
    expect(done.json.completed_at).toMatch(ISO)
    expect(done.json.started_at).toMatch(ISO)
    expect((await h.call("GET", "/api/v1/proofs?status=completed", { token: key })).json.total).toBe(1)
    expect((await h.call("GET", "/api/v1/proofs?status=queued", { token: key })).json.total).toBe(0)

    const verified = await h.call("GET", `/api/v1/proofs/${id}/verify`, { token: key })
    expect(verified.status).toBe(200)
    expect(Object.keys(verified.json).sort()).toEqual(["circuit", "circuit_version", "metadata", "proof_id", "proving_system", "valid", "verified_at"])
    expect(verified.json).toMatchObject({ proof_id: id, circuit: "multiplier", valid: true })
    expect(verified.json.verified_at).toMatch(ISO)
    expect(verified.headers.get("ratelimit-policy")).toBe(`"key";q=60;w=60, "daily";q=5000;w=86400`)
    expect(verified.headers.get("ratelimit")).toMatch(/^"key";r=\d+;t=\d+$/)
  })

  it("a constraint violation is accepted, then failed with error.code constraint_violation; verify is 409 proof_not_ready", async () => {
    const { key } = await h.newAccount()
    const created = await h.call("POST", "/api/v1/proofs", { token: key, body: { type: "multiplier", inputs: { a: 1, b: 7 } } })
    expect(created.status).toBe(202)
    const failed = await settled(key, created.json.proof_id)
    expect(failed.json).toMatchObject({ status: "failed", proof_blob: null, error: { code: "constraint_violation" } })
    expectEnvelope(await h.call("GET", `/api/v1/proofs/${created.json.proof_id}/verify`, { token: key }), 409, "proof_not_ready")
    expect((await h.call("GET", "/api/v1/proofs?status=failed", { token: key })).json.total).toBe(1)
  })
})

describe("GET /api/v1/webhooks/:id/deliveries with real attempts", () => {
  it("lists each attempt with event, attempt number, time, status code and latency; pages with limit", async () => {
    const { key } = await h.newAccount()
    const hook = await h.call("POST", "/api/v1/webhooks", { token: key, body: { url: OK_URL, events: ["key.created", "key.revoked"] } })
    expect(hook.status).toBe(201)
    const made = await h.call("POST", "/api/v1/keys", { token: key, body: { name: "ci" } })
    expect((await h.call("DELETE", `/api/v1/keys/${made.json.id}`, { token: key })).status).toBe(204)

    const log = await h.eventually(async () => {
      const reply = await h.call("GET", `/api/v1/webhooks/${hook.json.id}/deliveries`, { token: key })
      return reply.json.total >= 2 ? reply : undefined
    })
    expect(log.status).toBe(200)
    expect(log.json).toMatchObject({ total: 2, has_more: false })
    expect(log.json.deliveries.map((d: { event_type: string }) => d.event_type).sort()).toEqual(["key.created", "key.revoked"])
    for (const attempt of log.json.deliveries) {
      expect(attempt).toMatchObject({ webhook_id: hook.json.id, attempt: 1, outcome: "succeeded", status_code: 200, error: null })
      expect(attempt.event_id).toMatch(/^evt_/)
      expect(attempt.attempted_at).toMatch(ISO)
      expect(Number.isInteger(attempt.latency_ms)).toBe(true)
    }
    expect(log.text).not.toContain("whsec_")
    expect(log.text).not.toContain(made.json.key)

    const first = await h.call("GET", `/api/v1/webhooks/${hook.json.id}/deliveries?limit=1`, { token: key })
    expect(first.json.deliveries).toHaveLength(1)
    expect(first.json).toMatchObject({ total: 2, has_more: true })
    const second = await h.call("GET", `/api/v1/webhooks/${hook.json.id}/deliveries?limit=1&starting_after=${first.json.deliveries[0].id}`, { token: key })
    expect(second.json.deliveries).toHaveLength(1)
    expect(second.json.deliveries[0].id).not.toBe(first.json.deliveries[0].id)
    expect(second.json.has_more).toBe(false)

    // What the receiver got is signed with the secret from the create response.
    const sent = (await h.requests()).filter((r) => r.url === OK_URL && r.body.includes(made.json.id))
    expect(sent).toHaveLength(2)
    for (const request of sent) {
      expect(() => verifyWebhookSignature(request.body, request.headers["Service-Signature"], hook.json.secret)).not.toThrow()
      expect(request.body).not.toContain(made.json.key)
    }
  })

  it("a failing endpoint's attempt shows outcome failed, its status code and the response body", async () => {
    const { key } = await h.newAccount()
    const hook = await h.call("POST", "/api/v1/webhooks", { token: key, body: { url: FAILING_URL, events: ["key.created"] } })
    await h.call("POST", "/api/v1/keys", { token: key, body: { name: "ci" } })
    const log = await h.eventually(async () => {
      const reply = await h.call("GET", `/api/v1/webhooks/${hook.json.id}/deliveries`, { token: key })
      return reply.json.total >= 1 ? reply : undefined
    })
    expect(log.json.deliveries[0]).toMatchObject({ attempt: 1, outcome: "failed", status_code: 500, response_body: "nope", event_type: "key.created" })
  })

  it("another account cannot read a webhook's delivery log", async () => {
    const a = await h.newAccount("A")
    const b = await h.newAccount("B")
    const hook = await h.call("POST", "/api/v1/webhooks", { token: b.key, body: { url: OK_URL, events: ["key.created"] } })
    expectEnvelope(await h.call("GET", `/api/v1/webhooks/${hook.json.id}/deliveries`, { token: a.key }), 404, "webhook_not_found")
  })
})
