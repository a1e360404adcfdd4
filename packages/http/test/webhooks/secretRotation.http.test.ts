import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { allBut, createWebhook, detailPaths, ISO, keyWithScopes } from "../helpers.js"
import { expectEnvelope, makeHarness } from "../support.js"

let h: Awaited<ReturnType<typeof makeHarness>>
beforeAll(async () => {
  h = await makeHarness()
})
afterAll(() => h.close())

const rotate = (token: string, id: string, body: unknown = {}, headers: Record<string, string> = {}) =>
  h.call("POST", `/api/v1/webhooks/${id}/rotate-secret`, { token, body, headers })

describe("POST /webhooks/:id/rotate-secret over a real port", () => {
  it("200 with the webhook and its new secret, this once; the webhook shows when the replaced one stops, never a secret", async () => {
    const { key } = await h.newAccount("Rotator")
    const hook = await createWebhook(h, key, { description: "billing" })
    const before = Date.now()
    const rotated = await rotate(key, hook.id, { expires_in: 3600 })
    expect(rotated.status).toBe(200)
    const { secret, ...webhook } = rotated.json
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    expect(secret).not.toBe(hook.secret)
    expect(webhook).toEqual({
      id: hook.id,
      url: hook.url,
      events: hook.events,
      description: "billing",
      active: true,
      disabled_reason: null,
      previous_secret_expires_at: expect.stringMatching(ISO),
      created_at: hook.created_at,
      updated_at: expect.stringMatching(ISO),
      metadata: {}
    })
    const ends = Date.parse(webhook.previous_secret_expires_at)
    expect(ends).toBeGreaterThanOrEqual(before + 3_600_000 - 1_000)
    expect(ends).toBeLessThanOrEqual(Date.now() + 3_600_000)
    const got = await h.call("GET", `/api/v1/webhooks/${hook.id}`, { token: key })
    expect(got.json).toEqual(webhook)
    const listed = await h.call("GET", "/api/v1/webhooks", { token: key })
    for (const text of [got.text, listed.text]) {
      expect(text).not.toContain(secret)
      expect(text).not.toContain(hook.secret)
      expect(text).not.toContain('"secret"')
    }
    // Without expires_in the overlap is 24 h (force: the first overlap still runs).
    const again = await rotate(key, hook.id, { force: true })
    expect(again.status).toBe(200)
    expect(Date.parse(again.json.previous_secret_expires_at) - Date.parse(again.json.updated_at)).toBe(86_400_000)
  })

  it("409 secret_rotation_in_progress inside the overlap; force: true rotates; expires_in 0 leaves no overlap to wait for", async () => {
    const { key } = await h.newAccount("Twice")
    const hook = await createWebhook(h, key)
    const first = await rotate(key, hook.id, { expires_in: 600 })
    const refused = await rotate(key, hook.id, { expires_in: 0 })
    expectEnvelope(refused, 409, "secret_rotation_in_progress")
    expect(refused.json.error.message).toContain(first.json.previous_secret_expires_at)
    expect(refused.text).not.toContain("whsec_")
    // Nothing changed by the refusal.
    expect((await h.call("GET", `/api/v1/webhooks/${hook.id}`, { token: key })).json.updated_at).toBe(first.json.updated_at)
    const forced = await rotate(key, hook.id, { force: true, expires_in: 0 })
    expect(forced.status).toBe(200)
    expect(forced.json.secret).not.toBe(first.json.secret)
    expect(forced.json.previous_secret_expires_at).toBeNull()
    const next = await rotate(key, hook.id, {})
    expect(next.status).toBe(200)
    expect(next.json.previous_secret_expires_at).not.toBeNull()
  })

  it("400 invalid_request for a bad expires_in or force, or an unknown field, naming it", async () => {
    const { key } = await h.newAccount("Bad input")
    const hook = await createWebhook(h, key)
    const cases: ReadonlyArray<readonly [unknown, string]> = [
      [{ expires_in: -1 }, "expires_in"],
      [{ expires_in: 604_801 }, "expires_in"],
      [{ expires_in: 1.5 }, "expires_in"],
      [{ expires_in: "60" }, "expires_in"],
      [{ force: "yes" }, "force"],
      [{ overlap: 60 }, "overlap"]
    ]
    for (const [body, path] of cases) {
      const reply = await rotate(key, hook.id, body)
      expectEnvelope(reply, 400, "invalid_request")
      expect(detailPaths(reply), JSON.stringify(body)).toEqual([path])
    }
    // The longest overlap is accepted, and none of the refusals rotated anything.
    const longest = await rotate(key, hook.id, { expires_in: 604_800 })
    expect([longest.status, Date.parse(longest.json.previous_secret_expires_at) - Date.parse(longest.json.updated_at)]).toEqual([200, 604_800_000])
  })

  it("404 webhook_not_found for another account's, unknown and malformed ids; 403 without webhooks:write", async () => {
    const a = await h.newAccount("A")
    const b = await h.newAccount("B")
    const theirs = await createWebhook(h, b.key)
    for (const id of [theirs.id, "wh_01jd0000000000000000000000", "nope"]) {
      expectEnvelope(await rotate(a.key, id, {}), 404, "webhook_not_found")
      expectEnvelope(await rotate(a.key, id, { force: true }), 404, "webhook_not_found")
    }
    // B's webhook was not rotated by A's attempts.
    expect((await h.call("GET", `/api/v1/webhooks/${theirs.id}`, { token: b.key })).json.previous_secret_expires_at).toBeNull()
    const mine = await createWebhook(h, a.key)
    for (const scopes of [allBut("webhooks:write"), ["webhooks:read" as const]]) {
      const token = await keyWithScopes(h, a.key, scopes, `no-write-${scopes.length}`)
      expectEnvelope(await rotate(token, mine.id, {}), 403, "insufficient_scope")
    }
    expect((await h.call("GET", `/api/v1/webhooks/${mine.id}`, { token: a.key })).json.previous_secret_expires_at).toBeNull()
    expectEnvelope(await rotate("mzk_not-a-key", mine.id, {}), 401, "invalid_api_key")
  })

  it("is idempotent: a retry with the same Idempotency-Key gets the same answer, its secret included, without rotating again", async () => {
    const { key } = await h.newAccount("Replay")
    const hook = await createWebhook(h, key)
    const first = await rotate(key, hook.id, { expires_in: 600 }, { "idempotency-key": "rotate-1" })
    expect(first.status).toBe(200)
    const again = await rotate(key, hook.id, { expires_in: 600 }, { "idempotency-key": "rotate-1" })
    expect([again.status, again.headers.get("idempotent-replayed")]).toEqual([200, "true"])
    expect(again.text).toBe(first.text)
    expect(again.json.secret).toBe(first.json.secret)
    // Not run again: another rotation would have been refused (409) inside the overlap the first began.
    expect((await h.call("GET", `/api/v1/webhooks/${hook.id}`, { token: key })).json.updated_at).toBe(first.json.updated_at)
    expectEnvelope(await rotate(key, hook.id, { expires_in: 60 }, { "idempotency-key": "rotate-1" }), 422, "idempotency_key_reused")
    // A 409 is kept too, and replayed as it was.
    const conflict = await rotate(key, hook.id, {}, { "idempotency-key": "rotate-2" })
    expectEnvelope(conflict, 409, "secret_rotation_in_progress")
    const conflictAgain = await rotate(key, hook.id, {}, { "idempotency-key": "rotate-2" })
    expect([conflictAgain.status, conflictAgain.headers.get("idempotent-replayed")]).toEqual([409, "true"])
  })
})
