import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { allBut, createWebhook, keyWithScopes } from "../helpers.js"
import { expectEnvelope, makeHarness } from "../support.js"

let h: Awaited<ReturnType<typeof makeHarness>>
beforeAll(async () => {
  h = await makeHarness()
})
afterAll(() => h.close())

describe("key expiry and roll over a real port", () => {
  it("POST /keys/:id/roll: 201 with a new raw key; both keys work during the overlap; the list shows when the old one ends", async () => {
    const { key } = await h.newAccount("Roller")
    const created = await h.call("POST", "/api/v1/keys", { token: key, body: { name: "ci", scopes: ["keys:read", "proofs:read"] } })
    const before = Date.now()
    const rolled = await h.call("POST", `/api/v1/keys/${created.json.id}/roll`, { token: key, body: { expires_in: 3600 } })
    expect(rolled.status).toBe(201)
    expect(rolled.json).toMatchObject({ name: "ci", scopes: ["keys:read", "proofs:read"], expires_at: null, key: expect.stringMatching(/^mzk_/) })
    for (const token of [created.json.key, rolled.json.key]) expect((await h.call("GET", "/api/v1/keys", { token })).status).toBe(200)
    const listed = (await h.call("GET", "/api/v1/keys", { token: key })).json.keys as Array<{ id: string; expires_at: string | null }>
    const old = listed.find((k) => k.id === created.json.id)!
    const ends = Date.parse(old.expires_at!)
    expect(ends).toBeGreaterThanOrEqual(before + 3_600_000 - 1_000)
    expect(ends).toBeLessThanOrEqual(Date.now() + 3_600_000)
    // An empty body is the default overlap (24 h).
    const again = await h.call("POST", `/api/v1/keys/${rolled.json.id}/roll`, { token: key, body: {} })
    expect(again.status).toBe(201)
  })

  it("an overlap of 0 ends the old key at once (401); expires_at is taken and shown", async () => {
    const { key } = await h.newAccount("Now")
    const created = await h.call("POST", "/api/v1/keys", { token: key, body: { name: "leaked" } })
    const rolled = await h.call("POST", `/api/v1/keys/${created.json.id}/roll`, { token: key, body: { expires_in: 0 } })
    expect(rolled.status).toBe(201)
    expectEnvelope(await h.call("GET", "/api/v1/keys", { token: created.json.key }), 401, "invalid_api_key")
    // Expiry itself is walked through on TestClock in the core's tests; here the field round-trips.
    const later = new Date(Date.now() + 86_400_000).toISOString()
    const brief = await h.call("POST", "/api/v1/keys", { token: key, body: { name: "brief", expires_at: later } })
    expect([brief.status, brief.json.expires_at]).toEqual([201, later])
    expect((await h.call("GET", "/api/v1/keys", { token: brief.json.key })).status).toBe(200)
  })

  it("404 key_not_found for unknown, revoked, expired and other accounts' keys; 403 without keys:write; 400 for bad input", async () => {
    const a = await h.newAccount("A")
    const b = await h.newAccount("B")
    const theirs = await h.call("POST", "/api/v1/keys", { token: b.key, body: { name: "theirs" } })
    expectEnvelope(await h.call("POST", `/api/v1/keys/${theirs.json.id}/roll`, { token: a.key, body: {} }), 404, "key_not_found")
    expectEnvelope(await h.call("POST", "/api/v1/keys/key_01jd0000000000000000000000/roll", { token: a.key, body: {} }), 404, "key_not_found")
    const revoked = await h.call("POST", "/api/v1/keys", { token: a.key, body: { name: "gone" } })
    await h.call("DELETE", `/api/v1/keys/${revoked.json.id}`, { token: a.key })
    expectEnvelope(await h.call("POST", `/api/v1/keys/${revoked.json.id}/roll`, { token: a.key, body: {} }), 404, "key_not_found")
    const readOnly = await keyWithScopes(h, a.key, allBut("keys:write"))
    const mine = await h.call("POST", "/api/v1/keys", { token: a.key, body: { name: "mine" } })
    expectEnvelope(await h.call("POST", `/api/v1/keys/${mine.json.id}/roll`, { token: readOnly, body: {} }), 403, "insufficient_scope")
    for (const body of [{ expires_in: -1 }, { expires_in: 2_592_001 }, { expires_in: "60" }, { overlap: 60 }]) {
      expectEnvelope(await h.call("POST", `/api/v1/keys/${mine.json.id}/roll`, { token: a.key, body }), 400, "invalid_request")
    }
    const past = await h.call("POST", "/api/v1/keys", { token: a.key, body: { name: "past", expires_at: "2020-01-01T00:00:00.000Z" } })
    expectEnvelope(past, 400, "invalid_request")
    expect(past.json.error.details).toEqual([{ path: "expires_at", message: expect.stringContaining("future") }])
    // Nothing was rolled by the refusals.
    expect((await h.call("GET", "/api/v1/keys", { token: a.key })).json.keys.every((k: { expires_at: string | null }) => k.expires_at === null)).toBe(true)
    // A key may roll only keys whose scopes it holds itself: else it would mint a wider key.
    const keyAdmin = await keyWithScopes(h, a.key, ["keys:read", "keys:write"], "key-admin")
    const wide = await h.call("POST", "/api/v1/keys", { token: a.key, body: { name: "wide" } })
    const widened = await h.call("POST", `/api/v1/keys/${wide.json.id}/roll`, { token: keyAdmin, body: { expires_in: 0 } })
    expectEnvelope(widened, 403, "insufficient_scope")
    expect((await h.call("GET", "/api/v1/keys", { token: wide.json.key })).status).toBe(200)
    const narrow = await h.call("POST", "/api/v1/keys", { token: keyAdmin, body: { name: "narrow", scopes: ["keys:read"] } })
    expect((await h.call("POST", `/api/v1/keys/${narrow.json.id}/roll`, { token: keyAdmin, body: {} })).status).toBe(201)
  })

  it("409 key_limit_reached when the old key still counts; key.rolled is an event webhooks can subscribe to", async () => {
    const { key } = await h.newAccount("Full")
    const hook = await createWebhook(h, key, { events: ["key.rolled"] })
    expect(hook.events).toEqual(["key.rolled"])
    for (let i = 0; i < 9; i++) await h.call("POST", "/api/v1/keys", { token: key, body: { name: `k${i}` } })
    const first = (await h.call("GET", "/api/v1/keys", { token: key })).json.keys[1]
    expectEnvelope(await h.call("POST", `/api/v1/keys/${first.id}/roll`, { token: key, body: {} }), 409, "key_limit_reached")
    expect((await h.call("POST", `/api/v1/keys/${first.id}/roll`, { token: key, body: { expires_in: 0 } })).status).toBe(201)
  })
})

describe("rolling a key that expires, and a key already rolled", () => {
  it("the successor of a key created with expires_at inherits it; the roll may set another (or null: never), in the future", async () => {
    const { key } = await h.newAccount("Expiring")
    const ends = new Date(Date.now() + 7 * 86_400_000).toISOString()
    const expiring = await h.call("POST", "/api/v1/keys", { token: key, body: { name: "temp", expires_at: ends } })
    const rolled = await h.call("POST", `/api/v1/keys/${expiring.json.id}/roll`, { token: key, body: { expires_in: 60 } })
    expect(rolled.status).toBe(201)
    // Rolling a key replaces its secret, not its term: the new key stops when the old one was to.
    expect(rolled.json).toMatchObject({ name: "temp", expires_at: ends })
    const listed = (await h.call("GET", "/api/v1/keys", { token: key })).json.keys as Array<{ id: string; expires_at: string | null }>
    expect(listed.find((k) => k.id === rolled.json.id)?.expires_at).toBe(ends)

    const later = new Date(Date.now() + 30 * 86_400_000).toISOString()
    const renewed = await h.call("POST", `/api/v1/keys/${rolled.json.id}/roll`, { token: key, body: { expires_in: 0, expires_at: later } })
    expect([renewed.status, renewed.json.expires_at]).toEqual([201, later])
    const forever = await h.call("POST", `/api/v1/keys/${renewed.json.id}/roll`, { token: key, body: { expires_in: 0, expires_at: null } })
    expect([forever.status, forever.json.expires_at]).toEqual([201, null])

    for (const expires_at of ["2020-01-01T00:00:00.000Z", "tomorrow", 86_400]) {
      const refused = await h.call("POST", `/api/v1/keys/${forever.json.id}/roll`, { token: key, body: { expires_at } })
      expectEnvelope(refused, 400, "invalid_request")
      expect(new Set(refused.json.error.details.map((d: { path: string }) => d.path))).toEqual(new Set(["expires_at"]))
    }
    // The refusals rolled nothing: the last key is still the one without an end.
    const keys = (await h.call("GET", "/api/v1/keys", { token: key })).json.keys as Array<{ id: string; expires_at: string | null }>
    expect(keys.find((k) => k.id === forever.json.id)?.expires_at).toBeNull()
  })

  it("409 key_already_rolled for a key rolled before and still in its overlap, naming its successor; nothing changes, one key.rolled", async () => {
    const { key } = await h.newAccount("Twice")
    const created = await h.call("POST", "/api/v1/keys", { token: key, body: { name: "deploy" } })
    const first = await h.call("POST", `/api/v1/keys/${created.json.id}/roll`, { token: key, body: { expires_in: 3600 } })
    expect(first.status).toBe(201)
    const before = (await h.call("GET", "/api/v1/keys", { token: key })).json
    for (const body of [{}, { expires_in: 60 }, { expires_in: 0 }]) {
      const again = await h.call("POST", `/api/v1/keys/${created.json.id}/roll`, { token: key, body })
      expectEnvelope(again, 409, "key_already_rolled")
      expect(again.json.error.message).toContain(first.json.id)
    }
    // Ten concurrent rolls of the successor: one succeeds, the others are refused.
    const racing = await Promise.all(
      Array.from({ length: 10 }, () => h.call("POST", `/api/v1/keys/${first.json.id}/roll`, { token: key, body: { expires_in: 600 } }))
    )
    expect(racing.map((r) => r.status).sort()).toEqual([201, ...Array(9).fill(409)])
    const after = (await h.call("GET", "/api/v1/keys", { token: key })).json
    // The old key still ends when the first roll said, and no second successor of it exists.
    expect(after.keys.find((k: { id: string }) => k.id === created.json.id)).toEqual(before.keys.find((k: { id: string }) => k.id === created.json.id))
    expect(after.total).toBe(before.total + 1)
    const audit = (await h.call("GET", "/api/v1/audit-log?action=key.rolled", { token: key })).json.entries as Array<{ target: { id: string } }>
    expect(audit.map((e) => e.target.id).sort()).toEqual([created.json.id, first.json.id].sort())
    // The successor works, the old key still works in its overlap.
    for (const token of [created.json.key, first.json.key]) expect((await h.call("GET", "/api/v1/keys", { token })).status).toBe(200)
  })
})
