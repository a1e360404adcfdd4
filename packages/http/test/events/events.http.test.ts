import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { allBut, detailPaths, ISO, keyWithScopes } from "../helpers.js"
import { expectEnvelope, makeHarness } from "../support.js"

let h: Awaited<ReturnType<typeof makeHarness>>
beforeAll(async () => {
  h = await makeHarness()
})
afterAll(() => h.close())

const B = "/api/v1"

/** An account with five events of three types: key.created for its bootstrap key and two more, key.revoked, key.rolled. */
const accountWithEvents = async (name = "Events") => {
  const { key } = await h.newAccount(name)
  const first = await h.call("POST", `${B}/keys`, { token: key, body: { name: "first" } })
  await h.call("DELETE", `${B}/keys/${first.json.id}`, { token: key })
  const second = await h.call("POST", `${B}/keys`, { token: key, body: { name: "second" } })
  await h.call("POST", `${B}/keys/${second.json.id}/roll`, { token: key, body: { expires_in: 0 } })
  return key
}

const types = (reply: { json: any }) => (reply.json.events as Array<{ type: string }>).map((e) => e.type)

describe("GET /api/v1/events", () => {
  it("the account's events, newest first, as webhooks receive them, whether or not any webhook was subscribed", async () => {
    const key = await accountWithEvents()
    const reply = await h.call("GET", `${B}/events`, { token: key })
    expect(reply.status).toBe(200)
    expect(types(reply)).toEqual(["key.rolled", "key.created", "key.revoked", "key.created", "key.created"])
    expect([reply.json.total, reply.json.has_more]).toEqual([5, false])
    const [rolled] = reply.json.events
    expect(rolled).toEqual({
      id: expect.stringMatching(/^evt_/),
      type: "key.rolled",
      created_at: expect.stringMatching(ISO),
      data: expect.objectContaining({ name: "second", previous_key_expires_at: expect.stringMatching(ISO) })
    })
    // Never a secret: events carry no raw key, hash or webhook secret.
    expect(reply.text).not.toMatch(/mzk_[0-9A-Za-z]{20}|whsec_/)
    const ids = (reply.json.events as Array<{ id: string }>).map((e) => e.id)
    expect([...ids].sort().reverse()).toEqual(ids)
  })

  it("pages with limit and starting_after on to older events", async () => {
    const key = await accountWithEvents()
    const all = (await h.call("GET", `${B}/events`, { token: key })).json.events as Array<{ id: string }>
    const first = await h.call("GET", `${B}/events?limit=3`, { token: key })
    expect(first.json.events.map((e: { id: string }) => e.id)).toEqual(all.slice(0, 3).map((e) => e.id))
    expect([first.json.total, first.json.has_more]).toEqual([5, true])
    const next = await h.call("GET", `${B}/events?limit=3&starting_after=${all[2]!.id}`, { token: key })
    expect(next.json.events.map((e: { id: string }) => e.id)).toEqual(all.slice(3).map((e) => e.id))
    expect(next.json.has_more).toBe(false)
  })

  it("filters by one type, by several (the parameter repeated), and by creation time (created_gte inclusive, created_lt exclusive)", async () => {
    const key = await accountWithEvents()
    expect(types(await h.call("GET", `${B}/events?type=key.revoked`, { token: key }))).toEqual(["key.revoked"])
    const several = await h.call("GET", `${B}/events?type=key.revoked&type=key.rolled`, { token: key })
    expect(types(several)).toEqual(["key.rolled", "key.revoked"])
    expect(several.json.total).toBe(2)
    expect((await h.call("GET", `${B}/events?type=webhook.test`, { token: key })).json).toEqual({ events: [], total: 0, has_more: false })

    const all = (await h.call("GET", `${B}/events`, { token: key })).json.events as Array<{ id: string; created_at: string }>
    const revoked = all.find((e) => (e as unknown as { type: string }).type === "key.revoked")!
    const since = await h.call("GET", `${B}/events?created_gte=${revoked.created_at}`, { token: key })
    expect(since.json.events.every((e: { created_at: string }) => e.created_at >= revoked.created_at)).toBe(true)
    expect(since.json.events.map((e: { id: string }) => e.id)).toContain(revoked.id)
    const before = await h.call("GET", `${B}/events?created_lt=${revoked.created_at}`, { token: key })
    expect(before.json.events.every((e: { created_at: string }) => e.created_at < revoked.created_at)).toBe(true)
    expect(since.json.total + before.json.total).toBe(5)
    const window = await h.call("GET", `${B}/events?created_gte=${all.at(-1)!.created_at}&created_lt=${all.at(-1)!.created_at}`, { token: key })
    expect(window.json.total).toBe(0)
    const typed = await h.call("GET", `${B}/events?type=key.created&created_gte=${revoked.created_at}`, { token: key })
    expect(typed.json.events.every((e: { type: string; created_at: string }) => e.type === "key.created" && e.created_at >= revoked.created_at)).toBe(true)
  })

  it("400 invalid_request naming the parameter: an unknown type, a malformed time, a cursor of another kind, a bad limit", async () => {
    const { key } = await h.newAccount()
    for (const [query, path] of [
      ["type=proof.exploded", "type"],
      ["type=key.created&type=nope", "type"],
      ["created_gte=yesterday", "created_gte"],
      ["created_lt=2026-01-01", "created_lt"],
      ["created_gte=2026-01-01T00:00:00Z", "created_gte"],
      ["starting_after=wh_01jd0000000000000000000000", "starting_after"],
      ["starting_after=", "starting_after"],
      ["limit=0", "limit"],
      ["limit=101", "limit"]
    ] as const) {
      const reply = await h.call("GET", `${B}/events?${query}`, { token: key })
      expectEnvelope(reply, 400, "invalid_request")
      expect(detailPaths(reply).every((p) => p === path || p.startsWith(`${path}.`)), query).toBe(true)
    }
  })

  it("never lists another account's events; 403 without events:read; 401 without a key", async () => {
    const mine = await accountWithEvents("Mine")
    const theirs = await accountWithEvents("Theirs")
    const myIds = new Set(((await h.call("GET", `${B}/events`, { token: mine })).json.events as Array<{ id: string }>).map((e) => e.id))
    const theirIds = ((await h.call("GET", `${B}/events`, { token: theirs })).json.events as Array<{ id: string }>).map((e) => e.id)
    expect(theirIds.filter((id) => myIds.has(id))).toEqual([])
    const blind = await keyWithScopes(h, mine, allBut("events:read"))
    expectEnvelope(await h.call("GET", `${B}/events`, { token: blind }), 403, "insufficient_scope")
    expectEnvelope(await h.call("GET", `${B}/events`), 401, "invalid_api_key")
  })
})

describe("GET /api/v1/events/:id", () => {
  it("200 with the event as listed; 404 event_not_found for another account's, unknown and malformed ids; 403 without events:read", async () => {
    const mine = await accountWithEvents("Mine")
    const theirs = await accountWithEvents("Theirs")
    const [latest] = (await h.call("GET", `${B}/events?limit=1`, { token: mine })).json.events
    const got = await h.call("GET", `${B}/events/${latest.id}`, { token: mine })
    expect(got.status).toBe(200)
    expect(got.json).toEqual(latest)
    const [foreign] = (await h.call("GET", `${B}/events?limit=1`, { token: theirs })).json.events
    for (const id of [foreign.id, "evt_01jd0000000000000000000000", "nope", "key_01jd0000000000000000000000"]) {
      expectEnvelope(await h.call("GET", `${B}/events/${id}`, { token: mine }), 404, "event_not_found")
    }
    const blind = await keyWithScopes(h, mine, allBut("events:read"))
    expectEnvelope(await h.call("GET", `${B}/events/${latest.id}`, { token: blind }), 403, "insufficient_scope")
  })

  it("a key made before events:read existed does not gain it: its scopes are the ones it was given", async () => {
    const { key } = await h.newAccount()
    const older = ["keys:read", "keys:write", "webhooks:read", "webhooks:write", "proofs:read", "proofs:write", "circuits:read", "circuits:write"] as const
    const scoped = await keyWithScopes(h, key, older)
    expectEnvelope(await h.call("GET", `${B}/events`, { token: scoped }), 403, "insufficient_scope")
    // A new key with no scopes named gets every scope there is now, events:read included.
    const fresh = await h.call("POST", `${B}/keys`, { token: key, body: { name: "fresh" } })
    expect(fresh.json.scopes).toContain("events:read")
    expect((await h.call("GET", `${B}/events`, { token: fresh.json.key })).status).toBe(200)
  })
})
