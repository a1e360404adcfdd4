import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { allBut, createWebhook, detailPaths, expectRequestId, HOOK_URL, ISO, keyWithScopes, type Harness } from "../helpers.js"
import { expectEnvelope, makeHarness } from "../support.js"

let h: Harness
beforeAll(async () => {
  h = await makeHarness()
})
afterAll(() => h.close())

const WEBHOOK_FIELDS = ["active", "created_at", "description", "disabled_reason", "events", "id", "metadata", "previous_secret_expires_at", "updated_at", "url"]

describe("webhooks: success paths", () => {
  it("POST 201 returns the secret once; GET list/get 200 without it; PATCH 200; DELETE 204 empty", async () => {
    const { key } = await h.newAccount()
    const created = await h.call("POST", "/api/v1/webhooks", {
      token: key,
      body: { url: HOOK_URL, events: ["proof.completed", "key.created"], description: "ci hooks" }
    })
    expect(created.status).toBe(201)
    expectRequestId(created)
    expect(created.json).toMatchObject({
      url: HOOK_URL,
      events: ["proof.completed", "key.created"],
      description: "ci hooks",
      active: true,
      disabled_reason: null
    })
    expect(created.json.id).toMatch(/^wh_/)
    expect(created.json.secret).toMatch(/^whsec_/)
    expect(created.json.created_at).toMatch(ISO)
    const { id, secret } = created.json as { id: string; secret: string }

    const listed = await h.call("GET", "/api/v1/webhooks", { token: key })
    expect(listed.status).toBe(200)
    expectRequestId(listed)
    expect(listed.json).toMatchObject({ total: 1, has_more: false })
    expect(listed.json.webhooks).toHaveLength(1)
    expect(Object.keys(listed.json.webhooks[0]).sort()).toEqual(WEBHOOK_FIELDS)
    expect(listed.text).not.toContain(secret)
    expect(listed.text).not.toContain("whsec_")

    const got = await h.call("GET", `/api/v1/webhooks/${id}`, { token: key })
    expect(got.status).toBe(200)
    expect(Object.keys(got.json).sort()).toEqual(WEBHOOK_FIELDS)
    expect(got.json).toMatchObject({ id, url: HOOK_URL, active: true })
    expect(got.text).not.toContain("whsec_")

    const patched = await h.call("PATCH", `/api/v1/webhooks/${id}`, {
      token: key,
      body: { active: false, events: ["proof.failed"], url: "https://other.example.org/hook" }
    })
    expect(patched.status).toBe(200)
    expect(patched.json).toMatchObject({ id, active: false, events: ["proof.failed"], url: "https://other.example.org/hook" })
    expect(patched.text).not.toContain("whsec_")
    const reactivated = await h.call("PATCH", `/api/v1/webhooks/${id}`, { token: key, body: { active: true } })
    expect(reactivated.status).toBe(200)
    expect(reactivated.json).toMatchObject({ active: true, disabled_reason: null, events: ["proof.failed"] })
    expect((await h.call("GET", `/api/v1/webhooks/${id}`, { token: key })).json.active).toBe(true)

    const deliveries = await h.call("GET", `/api/v1/webhooks/${id}/deliveries`, { token: key })
    expect(deliveries.status).toBe(200)
    expect(deliveries.json).toEqual({ deliveries: [], total: 0, has_more: false })

    const removed = await h.call("DELETE", `/api/v1/webhooks/${id}`, { token: key })
    expect(removed.status).toBe(204)
    expect(removed.text).toBe("")
    expectRequestId(removed)
    expectEnvelope(await h.call("GET", `/api/v1/webhooks/${id}`, { token: key }), 404, "webhook_not_found")
    expectEnvelope(await h.call("DELETE", `/api/v1/webhooks/${id}`, { token: key }), 404, "webhook_not_found")
    expect((await h.call("GET", "/api/v1/webhooks", { token: key })).json).toEqual({ webhooks: [], total: 0, has_more: false })
  })

  it("PATCH with an empty object changes nothing; `description: null` clears the description", async () => {
    const { key } = await h.newAccount()
    const created = await createWebhook(h, key, { description: "notes", events: ["proof.completed", "proof.failed"] })
    const same = await h.call("PATCH", `/api/v1/webhooks/${created.id}`, { token: key, body: {} })
    expect(same.status).toBe(200)
    expect(same.json).toMatchObject({ url: HOOK_URL, events: ["proof.completed", "proof.failed"], description: "notes", active: true })
    const cleared = await h.call("PATCH", `/api/v1/webhooks/${created.id}`, { token: key, body: { description: null } })
    expect(cleared.json.description).toBeNull()
    expect(cleared.json.updated_at >= (created.created_at as string)).toBe(true)
  })

  it("`active: false` on create makes an inactive webhook", async () => {
    const { key } = await h.newAccount()
    const created = await createWebhook(h, key, { active: false })
    expect(created.active).toBe(false)
    expect((await h.call("GET", `/api/v1/webhooks/${created.id}`, { token: key })).json.active).toBe(false)
  })

  it("each create returns a different secret", async () => {
    const { key } = await h.newAccount()
    const a = await createWebhook(h, key)
    const b = await createWebhook(h, key)
    expect(a.secret).not.toBe(b.secret)
  })
})

describe("webhooks: validation", () => {
  const invalidBodies: Array<[string, unknown, string]> = [
    ["an array body", [], ""],
    ["a missing url", { events: ["proof.completed"] }, "url"],
    ["a missing events", { url: HOOK_URL }, "events"],
    ["an unknown event type", { url: HOOK_URL, events: ["proof.exploded"] }, "events"],
    ["an empty events array", { url: HOOK_URL, events: [] }, "events"],
    ["a non-https url", { url: "http://hooks.example.com/x", events: ["proof.completed"] }, "url"],
    ["a non-url", { url: "not a url", events: ["proof.completed"] }, "url"],
    ["an unknown field", { url: HOOK_URL, events: ["proof.completed"], secret: "whsec_mine" }, "secret"],
    ["a wrong active type", { url: HOOK_URL, events: ["proof.completed"], active: "yes" }, "active"],
    ["a repeated event type", { url: HOOK_URL, events: ["proof.completed", "proof.completed"] }, "events"],
    ["a url over 2048 characters", { url: `${HOOK_URL}/${"a".repeat(2048)}`, events: ["proof.completed"] }, "url"],
    ["a description over 1024 characters", { url: HOOK_URL, events: ["proof.completed"], description: "d".repeat(1025) }, "description"],
    ["events not an array", { url: HOOK_URL, events: "proof.completed" }, "events"]
  ]

  for (const [name, body, path] of invalidBodies) {
    it(`POST with ${name} is 400 invalid_request`, async () => {
      const { key } = await h.newAccount()
      const reply = await h.call("POST", "/api/v1/webhooks", { token: key, body })
      expectEnvelope(reply, 400, "invalid_request")
      if (path !== "") expect(detailPaths(reply).some((p) => p === path || p.startsWith(`${path}.`))).toBe(true)
      expect((await h.call("GET", "/api/v1/webhooks", { token: key })).json.total).toBe(0)
    })
  }

  it("malformed JSON and an empty body are 400 invalid_request", async () => {
    const { key } = await h.newAccount()
    expectEnvelope(await h.call("POST", "/api/v1/webhooks", { token: key, body: "{\"url\":" }), 400, "invalid_request")
    expectEnvelope(await h.call("POST", "/api/v1/webhooks", { token: key }), 400, "invalid_request")
  })

  it("PATCH with an unknown field, unknown event, empty events or http url is 400 invalid_request and changes nothing", async () => {
    const { key } = await h.newAccount()
    const { id } = await createWebhook(h, key)
    for (const body of [{ secret: "x" }, { events: ["nope"] }, { events: [] }, { url: "http://hooks.example.com" }, { active: 1 }]) {
      expectEnvelope(await h.call("PATCH", `/api/v1/webhooks/${id}`, { token: key, body }), 400, "invalid_request")
    }
    expect((await h.call("GET", `/api/v1/webhooks/${id}`, { token: key })).json).toMatchObject({
      url: HOOK_URL,
      events: ["proof.completed"],
      active: true
    })
  })

  const nonPublic = [
    "https://127.0.0.1/hook",
    "https://10.0.0.5/hook",
    "https://169.254.169.254/latest/meta-data",
    "https://192.168.1.1/",
    "https://[::1]/hook",
    "https://[::ffff:127.0.0.1]/hook",
    "https://localhost/hook",
    "https://0x7f000001/",
    "https://2130706433/",
    "https://127.1/",
    "https://100.64.0.1/",
    "https://0.0.0.0/",
    "https://[fd00::1]/",
    "https://[fe80::1]/",
    "https://169.254.170.2/",
    "https://metadata.google.internal/"
  ]
  for (const url of nonPublic) {
    it(`${url} is 400 invalid_webhook_url on create and on update`, async () => {
      const { key } = await h.newAccount()
      expectEnvelope(await h.call("POST", "/api/v1/webhooks", { token: key, body: { url, events: ["proof.completed"] } }), 400, "invalid_webhook_url")
      expect((await h.call("GET", "/api/v1/webhooks", { token: key })).json.total).toBe(0)
      const { id } = await createWebhook(h, key)
      expectEnvelope(await h.call("PATCH", `/api/v1/webhooks/${id}`, { token: key, body: { url } }), 400, "invalid_webhook_url")
      expect((await h.call("GET", `/api/v1/webhooks/${id}`, { token: key })).json.url).toBe(HOOK_URL)
    })
  }

  it("the 21st webhook is 409 webhook_limit_reached; deleting one makes room", async () => {
    const { key } = await h.newAccount()
    const ids: Array<string> = []
    for (let i = 0; i < 20; i++) ids.push((await createWebhook(h, key, { description: `n${i}` })).id)
    expectEnvelope(await h.call("POST", "/api/v1/webhooks", { token: key, body: { url: HOOK_URL, events: ["key.created"] } }), 409, "webhook_limit_reached")
    expect((await h.call("GET", "/api/v1/webhooks", { token: key })).json.total).toBe(20)
    expect((await h.call("DELETE", `/api/v1/webhooks/${ids[0]}`, { token: key })).status).toBe(204)
    expect((await h.call("POST", "/api/v1/webhooks", { token: key, body: { url: HOOK_URL, events: ["key.created"] } })).status).toBe(201)
  })
})

describe("webhooks: not found", () => {
  it("unknown, malformed and another account's ids are 404 webhook_not_found on every :id endpoint", async () => {
    const a = await h.newAccount("A")
    const b = await h.newAccount("B")
    const theirs = await createWebhook(h, b.key)
    const unknown = theirs.id.slice(0, -4) + (theirs.id.endsWith("0000") ? "1111" : "0000")
    for (const id of [theirs.id, unknown, "nope", "wh_"]) {
      expectEnvelope(await h.call("GET", `/api/v1/webhooks/${id}`, { token: a.key }), 404, "webhook_not_found")
      expectEnvelope(await h.call("PATCH", `/api/v1/webhooks/${id}`, { token: a.key, body: { active: false } }), 404, "webhook_not_found")
      expectEnvelope(await h.call("DELETE", `/api/v1/webhooks/${id}`, { token: a.key }), 404, "webhook_not_found")
      expectEnvelope(await h.call("GET", `/api/v1/webhooks/${id}/deliveries`, { token: a.key }), 404, "webhook_not_found")
    }
    // B's webhook is untouched by A's attempts.
    expect((await h.call("GET", `/api/v1/webhooks/${theirs.id}`, { token: b.key })).json).toMatchObject({ active: true })
  })
})

describe("webhooks: paging", () => {
  it("?limit= and ?starting_after= walk the list newest first", async () => {
    const { key } = await h.newAccount()
    const ids: Array<string> = []
    for (let i = 0; i < 5; i++) ids.unshift((await createWebhook(h, key, { description: `n${i}` })).id)
    const first = await h.call("GET", "/api/v1/webhooks?limit=2", { token: key })
    expect(first.status).toBe(200)
    expect(first.json.webhooks.map((w: { id: string }) => w.id)).toEqual(ids.slice(0, 2))
    expect(first.json).toMatchObject({ total: 5, has_more: true })
    const second = await h.call("GET", `/api/v1/webhooks?limit=2&starting_after=${ids[1]}`, { token: key })
    expect(second.json.webhooks.map((w: { id: string }) => w.id)).toEqual(ids.slice(2, 4))
    expect(second.json.has_more).toBe(true)
    const last = await h.call("GET", `/api/v1/webhooks?limit=2&starting_after=${ids[3]}`, { token: key })
    expect(last.json.webhooks.map((w: { id: string }) => w.id)).toEqual(ids.slice(4))
    expect(last.json.has_more).toBe(false)
    const all = await h.call("GET", "/api/v1/webhooks?limit=100", { token: key })
    expect(all.json.webhooks.map((w: { id: string }) => w.id)).toEqual(ids)
    const deliveries = await h.call("GET", `/api/v1/webhooks/${ids[0]}/deliveries?limit=1`, { token: key })
    expect(deliveries.status).toBe(200)
    expect(deliveries.json).toEqual({ deliveries: [], total: 0, has_more: false })
  })

  for (const limit of ["0", "101", "x", "-1", "1.5", ""]) {
    it(`?limit=${limit} is 400 invalid_request on the list and on deliveries`, async () => {
      const { key } = await h.newAccount()
      const { id } = await createWebhook(h, key)
      const list = await h.call("GET", `/api/v1/webhooks?limit=${limit}`, { token: key })
      expectEnvelope(list, 400, "invalid_request")
      expect(detailPaths(list)).toContain("limit")
      expectEnvelope(await h.call("GET", `/api/v1/webhooks/${id}/deliveries?limit=${limit}`, { token: key }), 400, "invalid_request")
    })
  }
})

describe("webhooks: authentication and scopes", () => {
  it("401 invalid_api_key without a key, with a bad key, and with a revoked key on every endpoint", async () => {
    const { key } = await h.newAccount()
    const { id } = await createWebhook(h, key)
    const revokedReply = await h.call("POST", "/api/v1/keys", { token: key, body: { name: "gone" } })
    expect((await h.call("DELETE", `/api/v1/keys/${revokedReply.json.id}`, { token: key })).status).toBe(204)
    const calls: Array<[string, string, unknown]> = [
      ["POST", "/api/v1/webhooks", { url: HOOK_URL, events: ["proof.completed"] }],
      ["GET", "/api/v1/webhooks", undefined],
      ["GET", `/api/v1/webhooks/${id}`, undefined],
      ["PATCH", `/api/v1/webhooks/${id}`, { active: false }],
      ["DELETE", `/api/v1/webhooks/${id}`, undefined],
      ["GET", `/api/v1/webhooks/${id}/deliveries`, undefined]
    ]
    for (const token of [undefined, "garbage", "mzk_" + "A".repeat(49), revokedReply.json.key as string]) {
      for (const [method, path, body] of calls) {
        expectEnvelope(await h.call(method, path, { token, body }), 401, "invalid_api_key")
      }
    }
    // Nothing changed.
    expect((await h.call("GET", `/api/v1/webhooks/${id}`, { token: key })).json.active).toBe(true)
  })

  it("authentication comes before validation: no key with a bad body, bad query or bad JSON is still 401", async () => {
    expectEnvelope(await h.call("POST", "/api/v1/webhooks", { body: { url: "http://x", events: [] } }), 401, "invalid_api_key")
    expectEnvelope(await h.call("POST", "/api/v1/webhooks", { token: "nope", body: "{oops" }), 401, "invalid_api_key")
    expectEnvelope(await h.call("GET", "/api/v1/webhooks?limit=0"), 401, "invalid_api_key")
    expectEnvelope(await h.call("PATCH", "/api/v1/webhooks/wh_x", { body: { events: ["nope"] } }), 401, "invalid_api_key")
  })

  it("403 insufficient_scope: writes need webhooks:write, reads need webhooks:read", async () => {
    const { key } = await h.newAccount()
    const { id } = await createWebhook(h, key)
    const noWrite = await keyWithScopes(h, key, allBut("webhooks:write"), "no-write")
    const noRead = await keyWithScopes(h, key, allBut("webhooks:read"), "no-read")
    const reader = await keyWithScopes(h, key, ["webhooks:read"], "reader")
    const writer = await keyWithScopes(h, key, ["webhooks:write"], "writer")

    for (const token of [noWrite, reader]) {
      expectEnvelope(await h.call("POST", "/api/v1/webhooks", { token, body: { url: HOOK_URL, events: ["proof.completed"] } }), 403, "insufficient_scope")
      expectEnvelope(await h.call("PATCH", `/api/v1/webhooks/${id}`, { token, body: { active: false } }), 403, "insufficient_scope")
      expectEnvelope(await h.call("DELETE", `/api/v1/webhooks/${id}`, { token }), 403, "insufficient_scope")
    }
    for (const token of [noRead, writer]) {
      expectEnvelope(await h.call("GET", "/api/v1/webhooks", { token }), 403, "insufficient_scope")
      expectEnvelope(await h.call("GET", `/api/v1/webhooks/${id}`, { token }), 403, "insufficient_scope")
      expectEnvelope(await h.call("GET", `/api/v1/webhooks/${id}/deliveries`, { token }), 403, "insufficient_scope")
    }
    // Nothing was created, changed or removed by the refused requests.
    const listed = await h.call("GET", "/api/v1/webhooks", { token: reader })
    expect(listed.status).toBe(200)
    expect(listed.json.total).toBe(1)
    expect(listed.json.webhooks[0]).toMatchObject({ id, active: true })
    // The right scope alone is enough.
    expect((await h.call("GET", `/api/v1/webhooks/${id}/deliveries`, { token: reader })).status).toBe(200)
    expect((await h.call("PATCH", `/api/v1/webhooks/${id}`, { token: writer, body: { description: "w" } })).status).toBe(200)
    const made = await h.call("POST", "/api/v1/webhooks", { token: writer, body: { url: HOOK_URL, events: ["key.revoked"] } })
    expect(made.status).toBe(201)
    expect((await h.call("DELETE", `/api/v1/webhooks/${made.json.id}`, { token: writer })).status).toBe(204)
  })
})
