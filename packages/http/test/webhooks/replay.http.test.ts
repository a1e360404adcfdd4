import { SUBSCRIBABLE_EVENT_TYPES } from "@mzk/core"
import { eventually, verifyWebhookSignature } from "@mzk/testkit"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { allBut, createWebhook, detailPaths, ISO, keyWithScopes } from "../helpers.js"
import { expectEnvelope, makeDeliveringHarness, type Reply } from "../support.js"

/** An endpoint each test switches between failing and answering. */
const FLAKY = "https://flaky.example.com/hook"
const DOWN = "https://down.example.com/hook"
let flakyStatus = 500

let h: Awaited<ReturnType<typeof makeDeliveringHarness>>
beforeAll(async () => {
  h = await makeDeliveringHarness({ [FLAKY]: () => ({ status: flakyStatus }), [DOWN]: [{ status: 503 }] })
})
afterAll(() => h.close())

const B = "/api/v1"
const minuteAgo = () => new Date(Date.now() - 60_000).toISOString()

/** The delivery, once it has left `pending`. */
const settledDelivery = (token: string, webhookId: string, deliveryId: string) =>
  eventually(async () => {
    const reply = await h.call("GET", `${B}/webhooks/${webhookId}/deliveries/${deliveryId}`, { token })
    return reply.json?.status === "pending" ? undefined : reply.json
  })

/** The attempt log oldest first, as these tests read it (the API lists it newest first). */
const attempts = async (token: string, webhookId: string) =>
  ((await h.call("GET", `${B}/webhooks/${webhookId}/deliveries?limit=100`, { token })).json.deliveries as Array<Record<string, any>>).reverse()

/** A webhook on FLAKY whose `webhook.test` delivery failed: a settled delivery to retry. */
const failedTest = async (token: string) => {
  flakyStatus = 500
  const webhook = await createWebhook(h, token, { url: FLAKY })
  const tested = await h.call("POST", `${B}/webhooks/${webhook.id}/test`, { token })
  expect(tested.status).toBe(202)
  expect(await settledDelivery(token, webhook.id, tested.json.delivery.id)).toMatchObject({ status: "failed", attempts: 1 })
  return { webhook, event: tested.json.event, delivery: tested.json.delivery }
}

const expectReplay = (first: Reply, again: Reply) => {
  expect(again.status).toBe(first.status)
  expect(again.json).toEqual(first.json)
  expect(again.headers.get("idempotent-replayed")).toBe("true")
  expect(again.headers.get("original-request")).toBe(first.headers.get("request-id"))
}

describe("POST /webhooks/:id/test", () => {
  it("202 with the event and its delivery; the webhook tested alone receives it, signed, once", async () => {
    const { key } = await h.newAccount()
    flakyStatus = 200
    const webhook = await createWebhook(h, key, { url: FLAKY, events: ["proof.completed"] })
    const bystander = await createWebhook(h, key, { url: DOWN, events: ["proof.completed", "key.created"] })
    const before = (await h.sent(FLAKY)).length
    const reply = await h.call("POST", `${B}/webhooks/${webhook.id}/test`, { token: key })
    expect(reply.status).toBe(202)
    const { event, delivery } = reply.json
    expect(event).toEqual({
      id: expect.stringMatching(/^evt_/),
      type: "webhook.test",
      created_at: expect.stringMatching(ISO),
      data: { webhook_id: webhook.id, message: expect.stringContaining(webhook.id), metadata: {} }
    })
    expect(delivery).toEqual({
      id: expect.stringMatching(/^del_/),
      webhook_id: webhook.id,
      event_id: event.id,
      event_type: "webhook.test",
      status: "pending",
      trigger: "manual",
      attempts: 0,
      next_attempt_at: event.created_at,
      last_attempt_at: null,
      created_at: event.created_at,
      updated_at: event.created_at
    })
    expect(await settledDelivery(key, webhook.id, delivery.id)).toMatchObject({ status: "succeeded", attempts: 1, next_attempt_at: null })
    const received = (await h.sent(FLAKY)).slice(before)
    expect(received.map((r) => JSON.parse(r.body))).toEqual([event])
    expect(verifyWebhookSignature(received[0]!.body, received[0]!.headers["Service-Signature"], webhook.secret)).toBeDefined()
    expect(await attempts(key, bystander.id)).toEqual([])
    expect((await attempts(key, webhook.id)).map((a) => [a.delivery_id, a.event_type, a.trigger, a.outcome]))
      .toEqual([[delivery.id, "webhook.test", "manual", "succeeded"]])
    // It is an event of the account like any other.
    expect((await h.call("GET", `${B}/events/${event.id}`, { token: key })).json).toEqual(event)
  })

  it("a failed test is not retried and leaves the webhook on", async () => {
    const { key } = await h.newAccount()
    const { webhook } = await failedTest(key)
    expect((await h.call("GET", `${B}/webhooks/${webhook.id}`, { token: key })).json).toMatchObject({ active: true, disabled_reason: null })
    expect(await attempts(key, webhook.id)).toHaveLength(1)
  })

  it("409 webhook_inactive for an inactive webhook; 404 for others' and unknown ids; 403 without webhooks:write; 401 without a key", async () => {
    const a = await h.newAccount("A")
    const b = await h.newAccount("B")
    const off = await createWebhook(h, a.key, { active: false })
    expectEnvelope(await h.call("POST", `${B}/webhooks/${off.id}/test`, { token: a.key }), 409, "webhook_inactive")
    const theirs = await createWebhook(h, b.key)
    for (const id of [theirs.id, "wh_01jd0000000000000000000000", "nope"]) {
      expectEnvelope(await h.call("POST", `${B}/webhooks/${id}/test`, { token: a.key }), 404, "webhook_not_found")
    }
    const mine = await createWebhook(h, a.key)
    const readOnly = await keyWithScopes(h, a.key, allBut("webhooks:write"))
    expectEnvelope(await h.call("POST", `${B}/webhooks/${mine.id}/test`, { token: readOnly }), 403, "insufficient_scope")
    expectEnvelope(await h.call("POST", `${B}/webhooks/${mine.id}/test`), 401, "invalid_api_key")
    for (const token of [a.key, b.key]) expect((await h.call("GET", `${B}/events?type=webhook.test`, { token })).json.total).toBe(0)
  })

  it("an Idempotency-Key replays the first answer and sends one test", async () => {
    const { key } = await h.newAccount()
    const webhook = await createWebhook(h, key)
    const headers = { "idempotency-key": "test-once" }
    const first = await h.call("POST", `${B}/webhooks/${webhook.id}/test`, { token: key, headers })
    expectReplay(first, await h.call("POST", `${B}/webhooks/${webhook.id}/test`, { token: key, headers }))
    expect((await h.call("GET", `${B}/events?type=webhook.test`, { token: key })).json.total).toBe(1)
  })

  it("no webhook can subscribe to webhook.test (400 naming the item), on create and on update", async () => {
    const { key } = await h.newAccount()
    const refused = await h.call("POST", `${B}/webhooks`, { token: key, body: { url: FLAKY, events: ["key.created", "webhook.test"] } })
    expectEnvelope(refused, 400, "invalid_request")
    expect(refused.json.error.details).toEqual([{ path: "events.1", message: expect.stringContaining("/test") }])
    const webhook = await createWebhook(h, key)
    const patched = await h.call("PATCH", `${B}/webhooks/${webhook.id}`, { token: key, body: { events: ["webhook.test"] } })
    expectEnvelope(patched, 400, "invalid_request")
    expect(detailPaths(patched)).toEqual(["events.0"])
  })
})

describe("an event type no webhook can subscribe to", () => {
  it("is named in the message, quoted cut short, with every type that can be subscribed to, none cut", async () => {
    const { key } = await h.newAccount()
    const long = `proof.${"x".repeat(500)}`
    const refused = await h.call("POST", `${B}/webhooks`, { token: key, body: { url: FLAKY, events: ["proof.done", long] } })
    expectEnvelope(refused, 400, "invalid_request")
    const every = `(${SUBSCRIBABLE_EVENT_TYPES.join(", ")})`
    expect(refused.json.error.details).toEqual([
      { path: "events.0", message: `"proof.done" is not an event type a webhook can subscribe to ${every}` },
      { path: "events.1", message: `"${long.slice(0, 100)}…" is not an event type a webhook can subscribe to ${every}` }
    ])
  })
})

describe("GET /webhooks/:id/deliveries/:delivery_id", () => {
  it("200 with the delivery; 404 delivery_not_found for another webhook's, unknown and malformed ids; 404 webhook_not_found across accounts; 403 without webhooks:read", async () => {
    const a = await h.newAccount("A")
    const b = await h.newAccount("B")
    const { webhook, delivery } = await failedTest(a.key)
    const got = await h.call("GET", `${B}/webhooks/${webhook.id}/deliveries/${delivery.id}`, { token: a.key })
    expect(got.status).toBe(200)
    expect(got.json).toMatchObject({ id: delivery.id, status: "failed", trigger: "manual", attempts: 1, last_attempt_at: expect.stringMatching(ISO) })
    const sibling = await createWebhook(h, a.key)
    for (const [webhookId, deliveryId] of [[sibling.id, delivery.id], [webhook.id, "del_01jd0000000000000000000000"], [webhook.id, "nope"]]) {
      expectEnvelope(await h.call("GET", `${B}/webhooks/${webhookId}/deliveries/${deliveryId}`, { token: a.key }), 404, "delivery_not_found")
    }
    expectEnvelope(await h.call("GET", `${B}/webhooks/${webhook.id}/deliveries/${delivery.id}`, { token: b.key }), 404, "webhook_not_found")
    const blind = await keyWithScopes(h, a.key, allBut("webhooks:read"))
    expectEnvelope(await h.call("GET", `${B}/webhooks/${webhook.id}/deliveries/${delivery.id}`, { token: blind }), 403, "insufficient_scope")
  })
})

describe("POST /webhooks/:id/deliveries/:delivery_id/retry", () => {
  it("202: one more attempt of the same event, signed afresh; a failure keeps the webhook on and nothing is retried by itself", async () => {
    const { key } = await h.newAccount()
    const { webhook, event, delivery } = await failedTest(key)
    const before = (await h.sent(FLAKY)).length
    const retried = await h.call("POST", `${B}/webhooks/${webhook.id}/deliveries/${delivery.id}/retry`, { token: key })
    expect(retried.status).toBe(202)
    expect(retried.json).toMatchObject({ id: delivery.id, event_id: event.id, event_type: "webhook.test", status: "pending", trigger: "manual", attempts: 1 })
    expect(await settledDelivery(key, webhook.id, delivery.id)).toMatchObject({ status: "failed", attempts: 2 })
    expect((await h.call("GET", `${B}/webhooks/${webhook.id}`, { token: key })).json.active).toBe(true)

    flakyStatus = 200
    await h.call("POST", `${B}/webhooks/${webhook.id}/deliveries/${delivery.id}/retry`, { token: key })
    expect(await settledDelivery(key, webhook.id, delivery.id)).toMatchObject({ status: "succeeded", attempts: 3 })
    const sent = (await h.sent(FLAKY)).slice(before - 1)
    expect(sent.map((r) => JSON.parse(r.body).id)).toEqual([event.id, event.id, event.id])
    for (const request of sent) expect(verifyWebhookSignature(request.body, request.headers["Service-Signature"], webhook.secret)).toBeDefined()
    expect((await attempts(key, webhook.id)).map((a) => [a.attempt, a.trigger, a.outcome, a.status_code]))
      .toEqual([[1, "manual", "failed", 500], [2, "manual", "failed", 500], [3, "manual", "succeeded", 200]])
  })

  it("409 delivery_pending while an attempt is due, 409 webhook_inactive when switched off; 404s; 403 without webhooks:write", async () => {
    const a = await h.newAccount("A")
    const b = await h.newAccount("B")
    // A scheduled delivery whose first attempt failed: its retry is due in 30 s.
    const webhook = await createWebhook(h, a.key, { url: DOWN, events: ["key.created"] })
    await h.call("POST", `${B}/keys`, { token: a.key, body: { name: "trigger" } })
    const [failed] = await eventually(async () => {
      const log = await attempts(a.key, webhook.id)
      return log.length > 0 ? log : undefined
    })
    const path = `${B}/webhooks/${webhook.id}/deliveries/${failed!.delivery_id}/retry`
    const pending = await h.call("POST", path, { token: a.key })
    expectEnvelope(pending, 409, "delivery_pending")
    expect(pending.json.error.message).toContain("due")
    const writeless = await keyWithScopes(h, a.key, allBut("webhooks:write"))
    expectEnvelope(await h.call("POST", path, { token: writeless }), 403, "insufficient_scope")
    expectEnvelope(await h.call("POST", path, { token: b.key }), 404, "webhook_not_found")
    const sibling = await createWebhook(h, a.key)
    expectEnvelope(await h.call("POST", `${B}/webhooks/${sibling.id}/deliveries/${failed!.delivery_id}/retry`, { token: a.key }), 404, "delivery_not_found")
    expectEnvelope(await h.call("POST", `${B}/webhooks/${webhook.id}/deliveries/del_01jd0000000000000000000000/retry`, { token: a.key }), 404, "delivery_not_found")
    // Switched off: its pending delivery is cancelled, and a retry must wait for it to be on again.
    await h.call("PATCH", `${B}/webhooks/${webhook.id}`, { token: a.key, body: { active: false } })
    expectEnvelope(await h.call("POST", path, { token: a.key }), 409, "webhook_inactive")
    await h.call("PATCH", `${B}/webhooks/${webhook.id}`, { token: a.key, body: { active: true } })
    expect((await h.call("POST", path, { token: a.key })).status).toBe(202)
  })

  it("an Idempotency-Key replays the first answer and queues one attempt", async () => {
    const { key } = await h.newAccount()
    const { webhook, delivery } = await failedTest(key)
    const headers = { "idempotency-key": "retry-once" }
    const path = `${B}/webhooks/${webhook.id}/deliveries/${delivery.id}/retry`
    const first = await h.call("POST", path, { token: key, headers })
    await settledDelivery(key, webhook.id, delivery.id)
    expectReplay(first, await h.call("POST", path, { token: key, headers }))
    expect(await settledDelivery(key, webhook.id, delivery.id)).toMatchObject({ attempts: 2 })
  })
})

describe("recovery: POST /webhooks/:id/recover, PATCH with recover_since, GET /webhooks/:id/recoveries", () => {
  /** A webhook on FLAKY with `count` key.created deliveries cancelled by switching it off after their first attempt failed. */
  const cancelledDeliveries = async (token: string, count: number) => {
    flakyStatus = 500
    const webhook = await createWebhook(h, token, { url: FLAKY, events: ["key.created"] })
    for (let i = 0; i < count; i++) await h.call("POST", `${B}/keys`, { token, body: { name: `k${i}` } })
    await eventually(async () => ((await attempts(token, webhook.id)).length === count ? true : undefined))
    await h.call("PATCH", `${B}/webhooks/${webhook.id}`, { token, body: { active: false } })
    return webhook
  }

  it("re-enabling with recover_since re-queues the cancelled deliveries, each sent once more and delivered", async () => {
    const { key } = await h.newAccount()
    const webhook = await cancelledDeliveries(key, 3)
    flakyStatus = 200
    const patched = await h.call("PATCH", `${B}/webhooks/${webhook.id}`, { token: key, body: { active: true, recover_since: minuteAgo() } })
    expect(patched.status).toBe(200)
    expect(patched.json).toMatchObject({ active: true, disabled_reason: null })
    const recovery = await eventually(async () => {
      const list = (await h.call("GET", `${B}/webhooks/${webhook.id}/recoveries`, { token: key })).json
      return list.recoveries[0]?.status === "completed" ? list : undefined
    })
    expect(recovery).toMatchObject({ total: 1, has_more: false, recoveries: [{ status: "completed", requeued: 3, completed_at: expect.stringMatching(ISO) }] })
    const log = await eventually(async () => {
      const all = await attempts(key, webhook.id)
      return all.filter((a) => a.outcome === "succeeded").length === 3 ? all : undefined
    })
    expect(log.map((a) => [a.attempt, a.trigger, a.outcome])).toEqual([
      ...[1, 1, 1].map((n) => [n, "scheduled", "failed"]),
      ...[2, 2, 2].map((n) => [n, "manual", "succeeded"])
    ])
  })

  it("POST /recover: 202 with the running recovery, then completed; GET it by id", async () => {
    const { key } = await h.newAccount()
    const webhook = await cancelledDeliveries(key, 2)
    flakyStatus = 200
    await h.call("PATCH", `${B}/webhooks/${webhook.id}`, { token: key, body: { active: true } })
    const since = minuteAgo()
    const started = await h.call("POST", `${B}/webhooks/${webhook.id}/recover`, { token: key, body: { since } })
    expect(started.status).toBe(202)
    expect(started.json).toEqual({
      id: expect.stringMatching(/^rcv_/),
      webhook_id: webhook.id,
      status: "running",
      since,
      until: started.json.created_at,
      requeued: 0,
      created_at: expect.stringMatching(ISO),
      completed_at: null
    })
    const done = await eventually(async () => {
      const reply = await h.call("GET", `${B}/webhooks/${webhook.id}/recoveries/${started.json.id}`, { token: key })
      return reply.json.status === "completed" ? reply : undefined
    })
    expect(done.status).toBe(200)
    expect(done.json).toMatchObject({ id: started.json.id, requeued: 2 })
  })

  it("400 for a since missing, malformed, before the retention window or ahead; recover_since only with active: true", async () => {
    const { key } = await h.newAccount()
    const webhook = await createWebhook(h, key)
    const path = `${B}/webhooks/${webhook.id}/recover`
    const longAgo = new Date(Date.now() - 31 * 86_400_000).toISOString()
    const ahead = new Date(Date.now() + 3_600_000).toISOString()
    for (const body of [{}, { since: "yesterday" }, { since: "2026-01-01" }, { since: longAgo }, { since: ahead }, { since: minuteAgo(), until: ahead }]) {
      const reply = await h.call("POST", path, { token: key, body })
      expectEnvelope(reply, 400, "invalid_request")
      expect(detailPaths(reply).length).toBeGreaterThan(0)
    }
    expect(detailPaths(await h.call("POST", path, { token: key, body: { since: longAgo } }))).toEqual(["since"])
    for (const body of [{ recover_since: minuteAgo() }, { active: false, recover_since: minuteAgo() }, { active: true, recover_since: longAgo }]) {
      const reply = await h.call("PATCH", `${B}/webhooks/${webhook.id}`, { token: key, body })
      expectEnvelope(reply, 400, "invalid_request")
      expect(detailPaths(reply)).toEqual(["recover_since"])
    }
    expect((await h.call("GET", `${B}/webhooks/${webhook.id}/recoveries`, { token: key })).json.total).toBe(0)
  })

  it("409 webhook_inactive; 404 webhook_not_found and recovery_not_found; 403 without the scope; an Idempotency-Key starts one recovery", async () => {
    const a = await h.newAccount("A")
    const b = await h.newAccount("B")
    const webhook = await createWebhook(h, a.key, { active: false })
    expectEnvelope(await h.call("POST", `${B}/webhooks/${webhook.id}/recover`, { token: a.key, body: { since: minuteAgo() } }), 409, "webhook_inactive")
    await h.call("PATCH", `${B}/webhooks/${webhook.id}`, { token: a.key, body: { active: true } })
    const headers = { "idempotency-key": "recover-once" }
    const body = { since: minuteAgo() }
    const first = await h.call("POST", `${B}/webhooks/${webhook.id}/recover`, { token: a.key, headers, body })
    expect(first.status).toBe(202)
    expectReplay(first, await h.call("POST", `${B}/webhooks/${webhook.id}/recover`, { token: a.key, headers, body }))
    expect((await h.call("GET", `${B}/webhooks/${webhook.id}/recoveries`, { token: a.key })).json.total).toBe(1)

    const recoveryPath = `${B}/webhooks/${webhook.id}/recoveries/${first.json.id}`
    for (const [method, path, body] of [
      ["POST", `${B}/webhooks/${webhook.id}/recover`, { since: minuteAgo() }],
      ["GET", `${B}/webhooks/${webhook.id}/recoveries`, undefined],
      ["GET", recoveryPath, undefined]
    ] as const) {
      expectEnvelope(await h.call(method, path, { token: b.key, ...(body === undefined ? {} : { body }) }), 404, "webhook_not_found")
    }
    const sibling = await createWebhook(h, a.key)
    for (const path of [`${B}/webhooks/${sibling.id}/recoveries/${first.json.id}`, `${B}/webhooks/${webhook.id}/recoveries/rcv_01jd0000000000000000000000`, `${B}/webhooks/${webhook.id}/recoveries/nope`]) {
      expectEnvelope(await h.call("GET", path, { token: a.key }), 404, "recovery_not_found")
    }
    const writeless = await keyWithScopes(h, a.key, allBut("webhooks:write"), "writeless")
    expectEnvelope(await h.call("POST", `${B}/webhooks/${webhook.id}/recover`, { token: writeless, body: { since: minuteAgo() } }), 403, "insufficient_scope")
    const blind = await keyWithScopes(h, a.key, allBut("webhooks:read"), "blind")
    expectEnvelope(await h.call("GET", `${B}/webhooks/${webhook.id}/recoveries`, { token: blind }), 403, "insufficient_scope")
    expectEnvelope(await h.call("GET", recoveryPath, { token: blind }), 403, "insufficient_scope")
    expectEnvelope(await h.call("GET", `${B}/webhooks/${webhook.id}/recoveries?starting_after=del_01jd0000000000000000000000`, { token: a.key }), 400, "invalid_request")
  })
})
