import { hashApiKey, SCOPES } from "@mzk/core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectEnvelope, makeHarness } from "../support.js"

let h: Awaited<ReturnType<typeof makeHarness>>
beforeAll(async () => {
  h = await makeHarness()
})
afterAll(() => h.close())

describe("POST/GET/DELETE /api/v1/keys", () => {
  it("creates a key (201, raw key once), lists it without secrets, revokes it (204), then it is refused (401)", async () => {
    const { key } = await h.newAccount()
    const created = await h.call("POST", "/api/v1/keys", { token: key, body: { name: "ci-deploy", description: "pipelines" } })
    expect(created.status).toBe(201)
    expect(created.headers.get("request-id")).toMatch(/^req_/)
    expect(created.json).toMatchObject({ name: "ci-deploy", description: "pipelines", last_used_at: null, scopes: [...SCOPES] })
    expect(created.json.id).toMatch(/^key_/)
    expect(created.json.key).toMatch(/^mzk_[0-9A-Za-z]{49}$/)
    expect(created.json.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)

    const listed = await h.call("GET", "/api/v1/keys", { token: created.json.key })
    expect(listed.status).toBe(200)
    expect(listed.json.total).toBe(2)
    expect(listed.json.limit).toBe(10)
    expect(listed.json.keys.map((k: { name: string }) => k.name)).toEqual(["ci-deploy", "bootstrap"])
    expect(listed.text).not.toContain(created.json.key)
    expect(listed.text).not.toContain(hashApiKey(created.json.key))
    expect(listed.json.keys.every((k: object) => !("key" in k))).toBe(true)

    const revoked = await h.call("DELETE", `/api/v1/keys/${created.json.id}`, { token: key })
    expect(revoked.status).toBe(204)
    expect(revoked.text).toBe("")
    expectEnvelope(await h.call("GET", "/api/v1/keys", { token: created.json.key }), 401, "invalid_api_key")
    expectEnvelope(await h.call("DELETE", `/api/v1/keys/${created.json.id}`, { token: key }), 404, "key_not_found")
  })

  it("the 11th active key is 409 key_limit_reached", async () => {
    const { key } = await h.newAccount()
    for (let i = 2; i <= 10; i++) expect((await h.call("POST", "/api/v1/keys", { token: key, body: { name: `k${i}` } })).status).toBe(201)
    expectEnvelope(await h.call("POST", "/api/v1/keys", { token: key, body: { name: "k11" } }), 409, "key_limit_reached")
  })

  it("missing, malformed, wrong-checksum and unknown keys are 401 invalid_api_key", async () => {
    const { key } = await h.newAccount()
    const flipped = key.slice(0, -1) + (key.endsWith("a") ? "b" : "a")
    for (const token of [undefined, "", "nope", flipped, "mzk_" + "0".repeat(49)]) {
      expectEnvelope(await h.call("GET", "/api/v1/keys", { token }), 401, "invalid_api_key")
    }
    const basic = await h.call("GET", "/api/v1/keys", { headers: { authorization: `Basic ${btoa("u:p")}` } })
    expectEnvelope(basic, 401, "invalid_api_key")
  })

  it("scopes: 403 insufficient_scope, and a key cannot mint a wider key", async () => {
    const { key } = await h.newAccount()
    const reader = await h.call("POST", "/api/v1/keys", { token: key, body: { name: "reader", scopes: ["keys:read"] } })
    expect((await h.call("GET", "/api/v1/keys", { token: reader.json.key })).status).toBe(200)
    expectEnvelope(await h.call("POST", "/api/v1/keys", { token: reader.json.key, body: { name: "x" } }), 403, "insufficient_scope")
    expectEnvelope(await h.call("DELETE", `/api/v1/keys/${reader.json.id}`, { token: reader.json.key }), 403, "insufficient_scope")
    const writer = await h.call("POST", "/api/v1/keys", { token: key, body: { name: "writer", scopes: ["keys:write"] } })
    expectEnvelope(await h.call("GET", "/api/v1/keys", { token: writer.json.key }), 403, "insufficient_scope")
    expectEnvelope(await h.call("POST", "/api/v1/keys", { token: writer.json.key, body: { name: "wider" } }), 403, "insufficient_scope")
    expect((await h.call("POST", "/api/v1/keys", { token: writer.json.key, body: { name: "same", scopes: ["keys:write"] } })).status).toBe(201)
  })

  it("another account's key id is 404, and its keys never show up", async () => {
    const a = await h.newAccount("A")
    const b = await h.newAccount("B")
    const theirs = await h.call("POST", "/api/v1/keys", { token: b.key, body: { name: "theirs" } })
    expectEnvelope(await h.call("DELETE", `/api/v1/keys/${theirs.json.id}`, { token: a.key }), 404, "key_not_found")
    const mine = await h.call("GET", "/api/v1/keys", { token: a.key })
    expect(mine.json.keys.map((k: { name: string }) => k.name)).toEqual(["bootstrap"])
  })

  it("validation failures are 400 invalid_request with details naming each field", async () => {
    const { key } = await h.newAccount()
    const bad = await h.call("POST", "/api/v1/keys", { token: key, body: { name: "has space", extra: true, scopes: ["root"] } })
    expectEnvelope(bad, 400, "invalid_request")
    const paths = bad.json.error.details.map((d: { path: string }) => d.path).sort()
    expect(paths).toEqual(expect.arrayContaining(["extra", "name"]))
    expect(paths.some((p: string) => p.startsWith("scopes"))).toBe(true)
    expectEnvelope(await h.call("POST", "/api/v1/keys", { token: key, body: { name: "x".repeat(65) } }), 400, "invalid_request")
    expectEnvelope(await h.call("POST", "/api/v1/keys", { token: key, body: [] }), 400, "invalid_request")
    expectEnvelope(await h.call("POST", "/api/v1/keys", { token: key }), 400, "invalid_request")
  })
})

describe("the error envelope on every error", () => {
  it("malformed JSON → 400, non-JSON → 415, over 1 MiB → 413", async () => {
    const { key } = await h.newAccount()
    expectEnvelope(await h.call("POST", "/api/v1/keys", { token: key, body: "{oops" }), 400, "invalid_request")
    expectEnvelope(await h.call("POST", "/api/v1/keys", { token: key, body: "name=x", headers: { "content-type": "application/x-www-form-urlencoded" } }), 415, "unsupported_media_type")
    expectEnvelope(await h.call("POST", "/api/v1/keys", { token: key, body: "{}", headers: { "content-type": "text/plain" } }), 415, "unsupported_media_type")
    const huge = JSON.stringify({ name: "big", description: "x".repeat(1024 * 1024) })
    expectEnvelope(await h.call("POST", "/api/v1/keys", { token: key, body: huge }), 413, "payload_too_large")
    expect((await h.call("POST", "/api/v1/keys", { token: key, body: { name: "ok" }, headers: { "content-type": "application/json; charset=utf-8" } })).status).toBe(201)
  })

  it("unknown routes → 404 not_found, wrong methods → 405 method_not_allowed with Allow", async () => {
    const { key } = await h.newAccount()
    expectEnvelope(await h.call("GET", "/api/v1/nothing", { token: key }), 404, "not_found")
    expectEnvelope(await h.call("GET", "/", {}), 404, "not_found")
    const wrong = await h.call("PUT", "/api/v1/keys", { token: key, body: {} })
    expectEnvelope(wrong, 405, "method_not_allowed")
    expect(wrong.headers.get("allow")).toBe("POST, GET, HEAD")
    const wrongId = await h.call("PATCH", "/api/v1/keys/key_123", { token: key, body: {} })
    expectEnvelope(wrongId, 405, "method_not_allowed")
    expect(wrongId.headers.get("allow")).toBe("DELETE")
  })
})
