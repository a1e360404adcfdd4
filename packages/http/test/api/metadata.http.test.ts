import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { circomParts, detailPaths, type Harness, multipart, settled, uploadCircuit } from "../helpers.js"
import { expectEnvelope, makeHarness } from "../support.js"

/**
 * A circuit upload's `metadata` form field (a JSON object, as every other create's `metadata`), over
 * a real port with the fake compiler: on the 202, on GET and the list, in `circuit.ready` and
 * `circuit.failed`, and each bad value a 400 naming the field. The other resources are tested over
 * the whole server in `packages/server/test/api/metadata.e2e.test.ts`.
 */

let h: Harness
beforeAll(async () => {
  h = await makeHarness()
})
afterAll(() => h.close())

const withMetadata = (name: string, metadata: string) => [...circomParts(name), { name: "metadata", value: metadata }]

describe("circuit metadata", () => {
  it("round-trips on the upload, GET, the list, and circuit.ready", async () => {
    const { key } = await h.newAccount()
    const uploaded = await uploadCircuit(h, key, withMetadata("with_meta", JSON.stringify({ project: "p1", "build.no": "7" })))
    expect(uploaded.metadata).toEqual({ project: "p1", "build.no": "7" })
    const ready = await settled(h, key, "with_meta")
    expect(ready.json).toMatchObject({ status: "ready", metadata: { project: "p1", "build.no": "7" } })
    const listed = await h.call("GET", "/api/v1/circuits", { token: key })
    const circuits = listed.json.circuits as Array<{ name: string; owner: string; metadata: unknown }>
    expect(circuits.find((c) => c.name === "with_meta")?.metadata).toEqual({ project: "p1", "build.no": "7" })
    // Built-in circuits have none.
    expect(circuits.filter((c) => c.owner === "builtin").every((c) => JSON.stringify(c.metadata) === "{}")).toBe(true)
    // Without the field: `{}`.
    expect((await uploadCircuit(h, key, circomParts("without_meta"))).metadata).toEqual({})

    const events = await h.call("GET", "/api/v1/events?type=circuit.ready", { token: key })
    const data = (events.json.events as Array<{ data: { name: string; metadata: unknown } }>).map((e) => e.data)
    expect(data.find((d) => d.name === "with_meta")?.metadata).toEqual({ project: "p1", "build.no": "7" })
  })

  it("circuit.failed carries it too", async () => {
    const { key } = await h.newAccount()
    const broken = [
      { name: "name", value: "broken_meta" },
      { name: "main", filename: "main.circom", value: "component main = T();\n// fake:fail compile_error no such template" },
      { name: "metadata", value: JSON.stringify({ ticket: "T-1" }) }
    ]
    await uploadCircuit(h, key, broken)
    const failed = await settled(h, key, "broken_meta")
    expect(failed.json).toMatchObject({ status: "failed", metadata: { ticket: "T-1" } })
    const events = await h.call("GET", "/api/v1/events?type=circuit.failed", { token: key })
    expect(events.json.events[0].data).toMatchObject({ name: "broken_meta", metadata: { ticket: "T-1" } })
  })

  it("a bad metadata field is a 400 naming it, and nothing is stored", async () => {
    const { key } = await h.newAccount()
    const cases: ReadonlyArray<readonly [string, string]> = [
      ["not json", "metadata"],
      ["[1]", "metadata"],
      ["\"text\"", "metadata"],
      [JSON.stringify({ n: 5 }), "metadata.n"],
      [JSON.stringify({ ["k".repeat(41)]: "v" }), `metadata.${"k".repeat(41)}`],
      [JSON.stringify({ note: "v".repeat(501) }), "metadata.note"],
      [JSON.stringify({ "a[b]": "v" }), "metadata.a[b]"],
      [JSON.stringify({ note: "\ud800" }), "metadata.note"],
      [JSON.stringify(Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, "v"]))), "metadata"]
    ]
    for (const [value, path] of cases) {
      const reply = await h.call("POST", "/api/v1/circuits", { token: key, ...multipart(withMetadata("refused", value)) })
      expectEnvelope(reply, 400, "invalid_request")
      expect(detailPaths(reply), value).toContain(path)
    }
    const listed = await h.call("GET", "/api/v1/circuits", { token: key })
    expect((listed.json.circuits as Array<{ name: string }>).map((c) => c.name)).not.toContain("refused")
  })

  it("a key with brackets is refused in a body and in a list's filter, naming it: metadata[a[b]] would be ambiguous", async () => {
    const { key } = await h.newAccount()
    const created = await h.call("POST", "/api/v1/proofs", { token: key, body: { type: "multiplier", inputs: { a: 3, b: 11 }, metadata: { "a[b]": "1" } } })
    expectEnvelope(created, 400, "invalid_request")
    expect(detailPaths(created)).toEqual(["metadata.a[b]"])
    for (const query of ["metadata[a[b]]=1", "metadata%5Ba%5Bb%5D%5D=1", "metadata[a]b]=1", "metadata[a[b]=1"]) {
      const listed = await h.call("GET", `/api/v1/proofs?${query}`, { token: key })
      expectEnvelope(listed, 400, "invalid_request")
      expect(detailPaths(listed), query).toEqual([decodeURIComponent(query.slice(0, query.indexOf("=")))])
    }
  })

  it("__proto__ is a key like any other: stored from the upload's field, and filtered on", async () => {
    const { key } = await h.newAccount()
    const uploaded = await uploadCircuit(h, key, withMetadata("proto_meta", '{"__proto__":"p","constructor":"c"}'))
    expect(JSON.stringify(uploaded.metadata)).toBe('{"__proto__":"p","constructor":"c"}')
    const proof = await h.call("POST", "/api/v1/proofs", { token: key, body: { type: "multiplier", inputs: { a: 3, b: 11 }, metadata: { ["__proto__"]: "p" } } })
    expect(JSON.stringify(proof.json.metadata)).toBe('{"__proto__":"p"}')
    await h.call("POST", "/api/v1/proofs", { token: key, body: { type: "multiplier", inputs: { a: 3, b: 11 } } })
    const ids = async (query: string) => (await h.call("GET", `/api/v1/proofs?${query}`, { token: key })).json.proofs.map((p: { proof_id: string }) => p.proof_id)
    expect(await ids("metadata[__proto__]=p")).toEqual([proof.json.proof_id])
    expect(await ids("metadata[__proto__]=q")).toEqual([])
  })
})
