import { type AccountId, SessionAuthenticator } from "@mzk/core"
import { TrustedProxies } from "@mzk/http"
import { Effect, Layer, ManagedRuntime, Option, Redacted } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { allBut, createWebhook, HOOK_URL, ISO, keyWithScopes, type Harness } from "../helpers.js"
import { coreWithBuilds, expectEnvelope, harnessOver, makeHarness, type Reply } from "../support.js"

let h: Harness
beforeAll(async () => {
  h = await makeHarness()
})
afterAll(() => h.close())

interface Entry {
  id: string
  action: string
  actor: { type: string; id: string | null }
  target: { type: string; id: string; name: string | null }
  request_id: string | null
  ip_address: string | null
  user_agent: string | null
  changes: Array<{ field: string; from: unknown; to: unknown }> | null
  created_at: string
}

const log = async (harness: Harness, token: string, query = ""): Promise<{ entries: Array<Entry>; total: number; has_more: boolean }> => {
  const reply = await harness.call("GET", `/api/v1/audit-log${query}`, { token })
  if (reply.status !== 200) throw new Error(`GET /audit-log: ${reply.status} ${reply.text}`)
  return reply.json
}

/** The id of the key a token is: the one key of its account's listing with its prefix. */
const keyIdOf = async (harness: Harness, token: string) => {
  const reply = await harness.call("GET", "/api/v1/keys", { token })
  return (reply.json.keys as Array<{ id: string; prefix: string }>).find((k) => token.startsWith(k.prefix))!.id
}

const requestIdOf = (reply: Reply) => reply.headers.get("request-id")

describe("GET /api/v1/audit-log", () => {
  it("lists every change the account's requests made, newest first, with the key, request id, address and user agent of each", async () => {
    const { key } = await h.newAccount()
    const actor = await keyIdOf(h, key)
    const ua = { "user-agent": "deploy-bot/2.1" }
    const createdKey = await h.call("POST", "/api/v1/keys", { token: key, body: { name: "ci", scopes: ["proofs:write"] }, headers: ua })
    const rolled = await h.call("POST", `/api/v1/keys/${createdKey.json.id}/roll`, { token: key, body: { expires_in: 0 }, headers: ua })
    const revoked = await h.call("DELETE", `/api/v1/keys/${rolled.json.id}`, { token: key, headers: ua })
    const webhook = await h.call("POST", "/api/v1/webhooks", { token: key, body: { url: HOOK_URL, events: ["proof.completed"] }, headers: ua })
    const patched = await h.call("PATCH", `/api/v1/webhooks/${webhook.json.id}`, { token: key, body: { active: false }, headers: ua })
    const deleted = await h.call("DELETE", `/api/v1/webhooks/${webhook.json.id}`, { token: key, headers: ua })
    expect([createdKey, rolled, revoked, webhook, patched, deleted].map((r) => r.status)).toEqual([201, 201, 204, 201, 200, 204])
    // Reads change nothing and are not audited.
    await h.call("GET", "/api/v1/keys", { token: key })
    await h.call("GET", `/api/v1/webhooks`, { token: key })

    const whole = await log(h, key)
    // The account's first key was made outside any request (as `mzk accounts create` makes it).
    const bootstrap = whole.entries.pop()!
    expect([bootstrap.action, bootstrap.actor, bootstrap.target.id, bootstrap.request_id]).toEqual(["key.created", { type: "system", id: null }, actor, null])
    const page = { ...whole, entries: whole.entries }
    expect(page.entries.map((e) => [e.action, e.target.id])).toEqual([
      ["webhook.deleted", webhook.json.id],
      ["webhook.updated", webhook.json.id],
      ["webhook.created", webhook.json.id],
      ["key.revoked", rolled.json.id],
      ["key.created", rolled.json.id],
      ["key.rolled", createdKey.json.id],
      ["key.created", createdKey.json.id]
    ])
    expect([page.total, page.has_more]).toEqual([8, false])
    const byRequest = [deleted, patched, webhook, revoked, rolled, rolled, createdKey].map(requestIdOf)
    expect(page.entries.map((e) => e.request_id)).toEqual(byRequest)
    for (const entry of page.entries) {
      expect(entry.id).toMatch(/^aud_/)
      expect(entry.created_at).toMatch(ISO)
      expect(entry.actor).toEqual({ type: "api_key", id: actor })
      expect(entry.ip_address).toBe("127.0.0.1")
      expect(entry.user_agent).toBe("deploy-bot/2.1")
    }
    expect(page.entries[1]!.changes).toEqual([{ field: "active", from: true, to: false }])
    expect(page.entries[5]!.changes![1]).toEqual({ field: "replaced_by", from: null, to: rolled.json.id })
    // No secret of any of them.
    const text = JSON.stringify(page)
    for (const secret of [createdKey.json.key, rolled.json.key, webhook.json.secret]) expect(text).not.toContain(secret)
    expect(text).not.toMatch(/mzk_[0-9A-Za-z]{20}|whsec_/)
  })

  it("records a secret rotation with when the replaced secret stops signing, never a secret", async () => {
    const { key } = await h.newAccount()
    const hook = await createWebhook(h, key)
    const first = await h.call("POST", `/api/v1/webhooks/${hook.id}/rotate-secret`, { token: key, body: { expires_in: 3600 } })
    const forced = await h.call("POST", `/api/v1/webhooks/${hook.id}/rotate-secret`, { token: key, body: { force: true, expires_in: 0 } })
    expect([first.status, forced.status]).toEqual([200, 200])
    const { entries } = await log(h, key, `?action=webhook.secret_rotated&target_id=${hook.id}`)
    expect(entries.map((e) => [e.request_id, e.changes])).toEqual([
      [requestIdOf(forced), [{ field: "previous_secret_expires_at", from: first.json.previous_secret_expires_at, to: null }]],
      [requestIdOf(first), [{ field: "previous_secret_expires_at", from: null, to: first.json.previous_secret_expires_at }]]
    ])
    const text = JSON.stringify(entries)
    for (const secret of [hook.secret, first.json.secret, forced.json.secret]) expect(text).not.toContain(secret)
  })

  it("pages on to older entries and filters by action, target and actor", async () => {
    const { key } = await h.newAccount()
    const other = await keyWithScopes(h, key, ["keys:write", "keys:read"], "other")
    const ids: Array<string> = []
    for (const name of ["a", "b", "c"]) ids.push((await h.call("POST", "/api/v1/keys", { token: other, body: { name, scopes: ["keys:read"] } })).json.id)
    await h.call("DELETE", `/api/v1/keys/${ids[0]}`, { token: key })

    const first = await log(h, key, "?limit=2")
    expect(first.entries.map((e) => e.action)).toEqual(["key.revoked", "key.created"])
    expect([first.total, first.has_more]).toEqual([6, true])
    const second = await log(h, key, `?limit=2&starting_after=${first.entries[1]!.id}`)
    expect(second.entries.map((e) => e.target.name)).toEqual(["b", "a"])
    const last = await log(h, key, `?limit=2&starting_after=${second.entries[1]!.id}`)
    expect(last.entries.map((e) => e.target.name)).toEqual(["other", "bootstrap"])
    expect(last.has_more).toBe(false)

    expect((await log(h, key, "?action=key.revoked")).entries.map((e) => e.target.id)).toEqual([ids[0]])
    expect((await log(h, key, `?target_id=${ids[0]}`)).entries.map((e) => e.action)).toEqual(["key.revoked", "key.created"])
    const otherId = await keyIdOf(h, other)
    expect((await log(h, key, `?actor_id=${otherId}`)).entries.map((e) => e.target.name)).toEqual(["c", "b", "a"])
  })

  it("shows an account only its own log: another account's ids find nothing", async () => {
    const mine = await h.newAccount()
    const theirs = await h.newAccount()
    const hook = await createWebhook(h, mine.key)
    expect((await log(h, theirs.key, `?target_id=${hook.id}`)).total).toBe(0)
    const theirEntries = await log(h, theirs.key)
    expect(theirEntries.entries.every((e) => e.target.id !== hook.id)).toBe(true)
    expect((await log(h, mine.key, `?target_id=${hook.id}`)).total).toBe(1)
  })

  it("needs a key with audit:read (403), a key at all (401), and a well-formed query (400)", async () => {
    const { key } = await h.newAccount()
    const without = await keyWithScopes(h, key, allBut("audit:read"))
    expectEnvelope(await h.call("GET", "/api/v1/audit-log", { token: without }), 403, "insufficient_scope")
    expectEnvelope(await h.call("GET", "/api/v1/audit-log"), 401, "invalid_api_key")
    for (const query of ["?limit=0", "?limit=101", "?starting_after=key_01m8a14j5reyhgge7tpk1ryevg", "?action=key.exploded", "?target_id=proof_01m8a14j5reyhgge7tpk1ryevg", "?actor_id="]) {
      const reply = await h.call("GET", `/api/v1/audit-log${query}`, { token: key })
      expectEnvelope(reply, 400, "invalid_request")
    }
  })

  it("a refused change and an idempotent replay write nothing", async () => {
    const { key } = await h.newAccount()
    for (let i = 1; i < 10; i++) await h.call("POST", "/api/v1/keys", { token: key, body: { name: `k${i}` } })
    expectEnvelope(await h.call("POST", "/api/v1/keys", { token: key, body: { name: "eleventh" } }), 409, "key_limit_reached")
    const before = await log(h, key, "?limit=100")
    expect(before.total).toBe(10)
    await h.call("DELETE", `/api/v1/keys/${before.entries[0]!.target.id}`, { token: key })
    const headers = { "idempotency-key": "audit-once" }
    const first = await h.call("POST", "/api/v1/keys", { token: key, body: { name: "once" }, headers })
    const replay = await h.call("POST", "/api/v1/keys", { token: key, body: { name: "once" }, headers })
    expect([first.status, replay.status, replay.headers.get("idempotent-replayed")]).toEqual([201, 201, "true"])
    const after = await log(h, key, "?action=key.created&limit=100")
    expect(after.entries.filter((e) => e.target.name === "once")).toHaveLength(1)
  })
})

describe("the client address and the actor", () => {
  it("believes X-Forwarded-For only from trusted proxies (mzk serve --trust-proxy)", async () => {
    const proxied = await harnessOver(ManagedRuntime.make(Layer.merge(coreWithBuilds(), Layer.succeed(TrustedProxies, ["loopback"]))))
    try {
      const { key } = await proxied.newAccount()
      const forwarded = { "x-forwarded-for": "198.51.100.4, 10.0.0.2" }
      // The proxy chain: the client, then a private hop that is not trusted, then this loopback peer.
      await proxied.call("POST", "/api/v1/keys", { token: key, body: { name: "via-proxy" }, headers: forwarded })
      expect((await log(proxied, key)).entries[0]!.ip_address).toBe("10.0.0.2")
    } finally {
      await proxied.close()
    }
    const { key } = await h.newAccount()
    await h.call("POST", "/api/v1/keys", { token: key, body: { name: "direct" }, headers: { "x-forwarded-for": "198.51.100.4" } })
    expect((await log(h, key)).entries[0]!.ip_address).toBe("127.0.0.1")
  })

  it("a session's changes name the session's holder, as its authenticator gave it", async () => {
    let account: AccountId | undefined
    const sessions = Layer.succeed(SessionAuthenticator, {
      authenticate: (token) =>
        Effect.succeed(Redacted.value(token) === "session-of-alice" && account !== undefined
          ? Option.some({ account_id: account, actor_id: "user_alice" })
          : Option.none())
    })
    const withSessions = await makeHarness(sessions)
    try {
      const created = await withSessions.newAccount()
      account = created.account
      const reply = await withSessions.call("POST", "/api/v1/webhooks", { token: "session-of-alice", body: { url: HOOK_URL, events: ["key.created"] } })
      expect(reply.status).toBe(201)
      const entry = (await log(withSessions, created.key, "?action=webhook.created")).entries[0]!
      expect(entry.actor).toEqual({ type: "session", id: "user_alice" })
    } finally {
      await withSessions.close()
    }
  })
})
