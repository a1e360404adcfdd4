import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { circomParts, detailPaths, type Harness, MULTIPLIER, multipart } from "../helpers.js"
import { expectEnvelope, makeHarness } from "../support.js"

/**
 * Every string of a request body is text every store keeps (the core's `storedTextProblem`: no
 * NUL, no lone surrogate), whatever the field, checked as the body is read (the `decodeJson`
 * stage, the form's text fields): fields that are only looked up (a proof's `type`) reached
 * Postgres, which answered a NUL with 503. The walk of every field on both stores is
 * `packages/server/test/api/storedText.e2e.test.ts`.
 */

let h: Harness
beforeAll(async () => {
  h = await makeHarness()
})
afterAll(() => h.close())

const NUL = "must not contain the NUL character (U+0000)"
const SURROGATE = "must not contain a lone surrogate (U+D800 to U+DFFF without its pair), which is not Unicode text"

/** A JSON body as its text, so escapes are sent exactly as written. */
const raw = (text: string) => ({ body: text, headers: { "content-type": "application/json" } })

const details = (reply: { json: any }) => (reply.json.error.details as Array<{ path: string; message: string }>).map((d) => `${d.path}: ${d.message}`)

describe("JSON bodies", () => {
  it("refuse a NUL or a lone surrogate in any string, keys included, naming each, before the endpoint decodes anything", async () => {
    const { key } = await h.newAccount()
    const reply = await h.call("POST", "/api/v1/proofs", {
      token: key,
      ...raw('{"type":"multiplier\\u0000","inputs":{"a":"\\ud800","b\\udc00":1},"metadata":{"note":"\\u0000"},"unknown":"\\uDBFF"}')
    })
    expectEnvelope(reply, 400, "invalid_request")
    expect(details(reply)).toEqual([`type: ${NUL}`, `inputs.a: ${SURROGATE}`, `inputs.b\udc00: a key ${SURROGATE}`, `metadata.note: ${NUL}`, `unknown: ${SURROGATE}`])
    expect((await h.call("GET", "/api/v1/proofs", { token: key })).json.total).toBe(0)
  })

  it("keep paired surrogates, escaped or not, and a backslash before u0000 as the text it is", async () => {
    const { key } = await h.newAccount()
    const reply = await h.call("POST", "/api/v1/keys", { token: key, ...raw('{"name":"emoji","description":"\\ud83d\\ude00 😀 \\\\u0000 \\\\ud800"}') })
    expect(reply.status).toBe(201)
    expect(reply.json.description).toBe("😀 😀 \\u0000 \\ud800")
  })

  it("refuse it in a batch's items at their paths, and answer a deep or large body with a bounded answer", async () => {
    const { key } = await h.newAccount()
    const batch = await h.call("POST", "/api/v1/proofs/batch", {
      token: key,
      body: { proofs: [MULTIPLIER, { ...MULTIPLIER, metadata: { order: "\ud800" } }] }
    })
    expectEnvelope(batch, 400, "invalid_request")
    expect(detailPaths(batch)).toEqual(["proofs.1.metadata.order"])
    const deep = await h.call("POST", "/api/v1/keys", { token: key, ...raw(`{"name":"deep","x":${"[".repeat(50_000)}"\\u0000"${"]".repeat(50_000)}}`) })
    expectEnvelope(deep, 400, "invalid_request")
    expect(detailPaths(deep)).toEqual([["x", ...Array.from({ length: 50_000 }, () => "0")].join(".")])
    const many = await h.call("POST", "/api/v1/keys", { token: key, body: { name: "many", x: Array.from({ length: 5_000 }, () => "\u0000") } })
    expectEnvelope(many, 400, "invalid_request")
    expect(detailPaths(many)).toHaveLength(100)
  })
})

describe("upload forms", () => {
  it("refuse a NUL in any text field, naming it, before the upload is looked at", async () => {
    const { key } = await h.newAccount()
    for (const field of ["description", "main", "proving_system", "metadata"]) {
      const parts = [...circomParts(`nul_${field.replace("_", "")}`).filter((part) => part.name !== field), { name: field, value: "a\u0000b" }]
      const reply = await h.call("POST", "/api/v1/circuits", { token: key, ...multipart(parts) })
      expectEnvelope(reply, 400, "invalid_request")
      expect(details(reply), field).toEqual([`${field}: ${NUL}`])
    }
    expect((await h.call("GET", "/api/v1/circuits", { token: key })).json.circuits.map((c: { name: string }) => c.name)).not.toContain("nul_description")
  })
})
