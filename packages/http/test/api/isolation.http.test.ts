import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createProof, createWebhook, MULTIPLIER, type Harness } from "../helpers.js"
import { expectEnvelope, makeHarness } from "../support.js"

let h: Harness
beforeAll(async () => {
  h = await makeHarness()
})
afterAll(() => h.close())

interface World {
  key: string
  keyIds: Array<string>
  webhookIds: Array<string>
  proofIds: Array<string>
}

/** An account with a second key, two webhooks, a proof and a batch of two. */
const populate = async (name: string): Promise<World> => {
  const { key } = await h.newAccount(name)
  const extra = await h.call("POST", "/api/v1/keys", { token: key, body: { name: `${name}-extra` } })
  expect(extra.status).toBe(201)
  const keys = await h.call("GET", "/api/v1/keys", { token: key })
  const webhookIds = [(await createWebhook(h, key)).id, (await createWebhook(h, key, { events: ["key.created"] })).id]
  const proofIds = [(await createProof(h, key)).proof_id]
  const batch = await h.call("POST", "/api/v1/proofs/batch", { token: key, body: { proofs: [MULTIPLIER, MULTIPLIER] } })
  expect(batch.status).toBe(202)
  proofIds.push(...batch.json.proofs.map((p: { proof_id: string }) => p.proof_id))
  return { key, keyIds: keys.json.keys.map((k: { id: string }) => k.id), webhookIds, proofIds }
}

describe("cross-account isolation", () => {
  let a: World
  let b: World
  beforeAll(async () => {
    a = await populate("A")
    b = await populate("B")
  })

  it("lists show only the caller's own keys, webhooks and proofs", async () => {
    for (const [me, other] of [[a, b], [b, a]] as const) {
      const keys = await h.call("GET", "/api/v1/keys", { token: me.key })
      expect(keys.json.keys.map((k: { id: string }) => k.id).sort()).toEqual([...me.keyIds].sort())
      expect(keys.json.total).toBe(me.keyIds.length)
      const webhooks = await h.call("GET", "/api/v1/webhooks?limit=100", { token: me.key })
      expect(webhooks.json.webhooks.map((w: { id: string }) => w.id)).toEqual([...me.webhookIds].reverse())
      expect(webhooks.json.total).toBe(me.webhookIds.length)
      const proofs = await h.call("GET", "/api/v1/proofs?limit=100", { token: me.key })
      expect(proofs.json.proofs.map((p: { proof_id: string }) => p.proof_id)).toEqual([...me.proofIds].reverse())
      expect(proofs.json.total).toBe(me.proofIds.length)
      const queued = await h.call("GET", "/api/v1/proofs?status=queued&limit=100", { token: me.key })
      expect(queued.json.total).toBe(me.proofIds.length)
      for (const id of [...other.keyIds, ...other.webhookIds, ...other.proofIds]) {
        expect(keys.text + webhooks.text + proofs.text + queued.text).not.toContain(id)
      }
    }
  })

  it("paging after another account's id never reveals its records", async () => {
    for (const cursor of [b.webhookIds[0], b.proofIds[0]]) {
      const webhooks = await h.call("GET", `/api/v1/webhooks?starting_after=${cursor}`, { token: a.key })
      expect([200, 400, 404]).toContain(webhooks.status)
      const proofs = await h.call("GET", `/api/v1/proofs?starting_after=${cursor}`, { token: a.key })
      expect([200, 400, 404]).toContain(proofs.status)
      for (const id of [...b.webhookIds, ...b.proofIds]) expect(webhooks.text + proofs.text).not.toContain(id)
    }
  })

  it("another account's key ids are 404 key_not_found, and its keys stay usable", async () => {
    for (const id of b.keyIds) {
      expectEnvelope(await h.call("DELETE", `/api/v1/keys/${id}`, { token: a.key }), 404, "key_not_found")
    }
    const keys = await h.call("GET", "/api/v1/keys", { token: b.key })
    expect(keys.json.total).toBe(b.keyIds.length)
  })

  it("another account's webhook ids are 404 webhook_not_found on get, update, delete and deliveries", async () => {
    for (const id of b.webhookIds) {
      expectEnvelope(await h.call("GET", `/api/v1/webhooks/${id}`, { token: a.key }), 404, "webhook_not_found")
      expectEnvelope(await h.call("PATCH", `/api/v1/webhooks/${id}`, { token: a.key, body: { active: false, url: "https://evil.example.com/x" } }), 404, "webhook_not_found")
      expectEnvelope(await h.call("DELETE", `/api/v1/webhooks/${id}`, { token: a.key }), 404, "webhook_not_found")
      expectEnvelope(await h.call("GET", `/api/v1/webhooks/${id}/deliveries`, { token: a.key }), 404, "webhook_not_found")
      const own = await h.call("GET", `/api/v1/webhooks/${id}`, { token: b.key })
      expect(own.status).toBe(200)
      expect(own.json).toMatchObject({ active: true, url: "https://hooks.example.com/mzk" })
    }
  })

  it("another account's proof ids are 404 proof_not_found on get and verify", async () => {
    for (const id of b.proofIds) {
      expectEnvelope(await h.call("GET", `/api/v1/proofs/${id}`, { token: a.key }), 404, "proof_not_found")
      expectEnvelope(await h.call("GET", `/api/v1/proofs/${id}/verify`, { token: a.key }), 404, "proof_not_found")
      expect((await h.call("GET", `/api/v1/proofs/${id}`, { token: b.key })).status).toBe(200)
    }
  })

  it("an id of another kind is a 404 too, never a 500", async () => {
    expectEnvelope(await h.call("GET", `/api/v1/webhooks/${a.proofIds[0]}`, { token: a.key }), 404, "webhook_not_found")
    expectEnvelope(await h.call("GET", `/api/v1/proofs/${a.webhookIds[0]}`, { token: a.key }), 404, "proof_not_found")
    expectEnvelope(await h.call("DELETE", `/api/v1/keys/${a.webhookIds[0]}`, { token: a.key }), 404, "key_not_found")
  })
})
