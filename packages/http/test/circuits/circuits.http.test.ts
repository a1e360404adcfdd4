import { FetchHttpClient } from "@effect/platform"
import { ArtifactsRepo, CircuitsRepo, encodeProofBlob, now, ProofsRepo } from "@mzk/core"
import { makeMzkClient } from "@mzk/http"
import { FakeCompiler, testCore } from "@mzk/testkit"
import { Effect, ManagedRuntime, Option } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  allBut,
  circomParts,
  detailPaths,
  expectRequestId,
  type FormPart,
  type Harness,
  ISO,
  keyWithScopes,
  multipart,
  prebuiltParts,
  settled,
  SUM_MAIN,
  uploadCircuit
} from "../helpers.js"
import { coreWithBuilds, expectEnvelope, harnessOver, makeHarness } from "../support.js"

let h: Harness
beforeAll(async () => {
  h = await makeHarness()
})
afterAll(() => h.close())

const upload = (token: string, parts: ReadonlyArray<FormPart>) => h.call("POST", "/api/v1/circuits", { token, ...multipart(parts) })
const sampleInputs = (value: string): FormPart => ({ name: "sample_inputs", filename: "input.json", contentType: "application/json", value })

const RECORD_FIELDS = [
  "constraints",
  "created_at",
  "description",
  "development_only",
  "error",
  "id",
  "inputs",
  "metadata",
  "name",
  "owner",
  "proving_system",
  "proving_systems",
  "public_signals",
  "status",
  "version"
]

/** Every queued proof completed straight in storage (no proof worker runs here) with a proof of the right shape. */
const completeQueuedProofs = () =>
  h.run(Effect.gen(function*() {
    const repo = yield* ProofsRepo
    const at = yield* now
    const claimed = yield* repo.claimNext({ now: at, leaseUntil: at, maxRunningPerAccount: 100, limit: 100 })
    for (const proof of claimed) {
      const signals = Object.fromEntries(Object.keys(proof.inputs ?? {}).map((name) => [name, "0"]))
      yield* repo.complete(proof.id, proof.attempts, {
        proof_blob: encodeProofBlob({
          pi_a: ["1", "2", "1"],
          pi_b: [["3", "4"], ["5", "6"], ["1", "0"]],
          pi_c: ["7", "8", "1"],
          protocol: "groth16",
          curve: "bn128"
        }),
        public_inputs: { ...signals, z: "17", y: "5", c: "33" },
        duration_ms: 1,
        completed_at: at,
        expires_at: at
      })
    }
  }))

describe("POST /api/v1/circuits (multipart/form-data)", () => {
  it("circom sources: 202 with the record compiling, then ready with its inputs, signals and key", async () => {
    const { account, key } = await h.newAccount()
    const reply = await upload(key, circomParts("sum"))
    expect(reply.status).toBe(202)
    expectRequestId(reply)
    expect(Object.keys(reply.json).sort()).toEqual(RECORD_FIELDS)
    expect(reply.json).toMatchObject({
      name: "sum",
      owner: account,
      status: "compiling",
      error: null,
      description: "x[0] * x[1] + y",
      constraints: null,
      inputs: [],
      public_signals: [],
      development_only: false
    })
    expect(reply.json.created_at).toMatch(ISO)
    const ready = await settled(h, key, "sum")
    expect(ready.status).toBe(200)
    expect(ready.json).toMatchObject({
      name: "sum",
      status: "ready",
      inputs: [
        { name: "x", visibility: "private", kind: "field", dimensions: [2] },
        { name: "y", visibility: "public", kind: "field", dimensions: [] }
      ],
      public_signals: ["z", "y"]
    })
    expect(ready.json.constraints).toBeGreaterThan(0)
    expect(ready.json.verification_key).toMatchObject({ protocol: "groth16" })
    expect(Object.keys(ready.json).sort()).toEqual([...RECORD_FIELDS, "verification_key"].sort())
  })

  it("prebuilt artifacts (wasm, zkey, sym, r1cs) sent by fetch's FormData, binary bytes intact: 202, then ready", async () => {
    const { key } = await h.newAccount()
    const form = new FormData()
    form.append("name", "prebuilt")
    form.append("wasm", new Blob([new Uint8Array([0, 0x61, 0x73, 0x6d, 0xff, 0xfe, 0x0d, 0x0a])], { type: "application/wasm" }), "c.wasm")
    form.append("zkey", new Blob([new Uint8Array(70_000).map((_, i) => i % 251)]), "c.zkey")
    form.append("sym", new Blob(["signal input a;\nsignal input b;\nsignal output c;\ncomponent main {public [b]} = T();\n"]), "c.sym")
    form.append("r1cs", new Blob([new Uint8Array([1, 2, 3])]), "c.r1cs")
    const response = await fetch(`${h.baseUrl}/api/v1/circuits`, { method: "POST", headers: { authorization: `Bearer ${key}` }, body: form })
    expect(response.status).toBe(202)
    expect(await response.json()).toMatchObject({ name: "prebuilt", status: "compiling", description: null })
    const ready = await settled(h, key, "prebuilt")
    expect(ready.json).toMatchObject({ status: "ready", public_signals: ["c", "b"], development_only: false })
  })

  it("prebuilt artifacts with sample_inputs: 202, stored with the upload as sent, then ready", async () => {
    const { account, key } = await h.newAccount()
    const sample = "{\"a\": \"5\", \"xs\": [1, \"2\"]}"
    await uploadCircuit(h, key, [...prebuiltParts("sampled"), sampleInputs(sample)])
    expect((await settled(h, key, "sampled")).json).toMatchObject({ status: "ready" })
    const stored = await h.run(Effect.gen(function*() {
      const circuit = Option.getOrThrow(yield* (yield* CircuitsRepo).getByName(account, "sampled"))
      if (circuit.source.kind !== "artifacts" || circuit.source.sample_inputs === undefined) return undefined
      return Option.map(yield* (yield* ArtifactsRepo).get(circuit.source.sample_inputs), (bytes) => new TextDecoder().decode(bytes))
    }))
    expect(stored).toEqual(Option.some(sample))
  })

  it("the typed client uploads a FormData and decodes the record", async () => {
    const { key } = await h.newAccount()
    const form = new FormData()
    form.append("name", "typed")
    form.append("main", new Blob([SUM_MAIN], { type: "text/plain" }), "sum.circom")
    const circuit = await Effect.runPromise(Effect.gen(function*() {
      const client = yield* makeMzkClient({ baseUrl: h.baseUrl, apiKey: key })
      return yield* client.circuits.create({ payload: form })
    }).pipe(Effect.provide(FetchHttpClient.layer)))
    expect(circuit).toMatchObject({ name: "typed", status: "compiling" })
  })

  it("refuses a bad or missing name, naming the part", async () => {
    const { key } = await h.newAccount()
    for (const name of ["", "has space", "x".repeat(65), "dot.ted", "ü"]) {
      const reply = await upload(key, circomParts(name))
      expectEnvelope(reply, 400, "invalid_request")
      expect(detailPaths(reply)).toEqual(["name"])
    }
    const unnamed = await upload(key, circomParts("x").filter((part) => part.name !== "name"))
    expectEnvelope(unnamed, 400, "invalid_request")
    expect(detailPaths(unnamed)).toEqual(["name"])
  })

  it("refuses missing parts, both kinds mixed and parts it does not take, naming each", async () => {
    const { key } = await h.newAccount()
    const cases: Array<[string, ReadonlyArray<FormPart>, Array<string>]> = [
      ["no circuit at all", [{ name: "name", value: "a" }], ["main"]],
      ["sources without main", circomParts("a").filter((p) => p.name !== "main"), ["main"]],
      ["prebuilt without zkey and sym", prebuiltParts("a").filter((p) => p.name !== "zkey" && p.name !== "sym"), ["zkey", "sym"]],
      ["both kinds", [...circomParts("a"), ...prebuiltParts("a").filter((p) => p.name !== "name")], ["wasm", "zkey", "sym"]],
      ["an unknown part", [...circomParts("a"), { name: "readme", filename: "README.md", value: "hi" }], ["readme"]],
      ["an unknown field", [...circomParts("a"), { name: "version", value: "1" }], ["version"]],
      ["main sent twice", [...circomParts("a"), { name: "main", filename: "other.circom", value: SUM_MAIN }], ["main"]],
      ["the name sent as a file", [{ name: "name", filename: "name.txt", value: "a" }, ...circomParts("a").slice(1)], ["name"]],
      ["a field that is not text", [{ name: "name", contentType: "application/json", value: "\"a\"" }, ...circomParts("a").slice(1)], ["name"]],
      ["a zkey of the wrong type", prebuiltParts("a").map((p) => (p.name === "zkey" ? { ...p, contentType: "image/png" } : p)), ["zkey"]],
      ["a source of the wrong type", circomParts("a").map((p) => (p.name === "sources" ? { ...p, contentType: "application/zip" } : p)), ["sources.0"]],
      ["sample inputs with circom sources", [...circomParts("a"), sampleInputs("{\"a\": 1}")], ["sample_inputs"]],
      ["sample inputs that are not JSON", [...prebuiltParts("a"), sampleInputs("{a: 1}")], ["sample_inputs"]],
      ["sample inputs that are not a JSON object", [...prebuiltParts("a"), sampleInputs("[1, 2]")], ["sample_inputs"]],
      ["sample inputs of the wrong type", [...prebuiltParts("a"), { ...sampleInputs("{}"), contentType: "image/png" }], ["sample_inputs"]]
    ]
    for (const [label, parts, paths] of cases) {
      const reply = await upload(key, parts)
      expect(reply.status, `${label}: ${reply.text}`).toBe(400)
      expectEnvelope(reply, 400, "invalid_request")
      expect(detailPaths(reply), label).toEqual(paths)
    }
    expect((await h.call("GET", "/api/v1/circuits", { token: key })).json.circuits.filter((c: { owner: string }) => c.owner !== "builtin")).toEqual([])
  })

  it("takes source paths from the filenames: relative paths are kept, absolute, .. and missing ones refused", async () => {
    const { key } = await h.newAccount()
    const withSource = (filename: string | undefined) =>
      circomParts("paths").map((p) => (p.name === "sources" ? (filename === undefined ? { name: p.name, value: p.value } : { ...p, filename }) : p))
    for (const filename of ["/etc/passwd", "../up.circom", "lib/../../up.circom", "lib//mul.circom", "./mul.circom", "C:\\lib\\mul.circom", "c:/mul.circom"]) {
      const reply = await upload(key, withSource(filename))
      expectEnvelope(reply, 400, "invalid_request")
      expect(detailPaths(reply), filename).toEqual(["sources.0"])
    }
    // Without a filename (or an empty one) a part is a form field (RFC 7578), not a file.
    for (const filename of [undefined, ""]) {
      const unnamed = await upload(key, withSource(filename))
      expectEnvelope(unnamed, 400, "invalid_request")
      expect(detailPaths(unnamed)).toEqual(["sources"])
    }
    const twice = await upload(key, [...circomParts("paths"), { name: "sources", filename: "lib/mul.circom", value: "// again" }])
    expect(detailPaths(twice)).toEqual(["sources.1"])
    const mainWithoutName = await upload(key, circomParts("paths").map((p) => (p.name === "main" ? { name: "main", value: p.value } : p)))
    expect(detailPaths(mainWithoutName)).toEqual(["main"])
    // Paths in directories, and names in filename*, are the upload's own.
    const nested = await upload(key, [...withSource("lib/deep/er/mul.circom"), { name: "sources", filename: "README", value: "notes" }])
    expect(nested.status).toBe(202)
  })

  it("refuses a malformed body as invalid_request, and a body that is not multipart as 415", async () => {
    const { key } = await h.newAccount()
    const { body } = multipart(circomParts("broken"))
    for (
      const [label, contentType, sent] of [
        ["no boundary", "multipart/form-data", body],
        ["another boundary", "multipart/form-data; boundary=nope", body],
        ["cut short", multipart([]).headers["content-type"].replace("mzk-test-boundary-7MA4YWxk", "mzk-test-boundary-7MA4YWxk"), body.slice(0, body.length / 2)],
        ["empty", multipart([]).headers["content-type"], ""],
        ["no disposition", multipart([]).headers["content-type"], "--mzk-test-boundary-7MA4YWxk\r\nContent-Type: text/plain\r\n\r\nx\r\n--mzk-test-boundary-7MA4YWxk--\r\n"]
      ] as const
    ) {
      const reply = await h.call("POST", "/api/v1/circuits", { token: key, body: sent, headers: { "content-type": contentType } })
      expect(reply.status, `${label}: ${reply.text}`).toBe(400)
      expectEnvelope(reply, 400, "invalid_request")
      expect(detailPaths(reply).length, label).toBeGreaterThan(0)
    }
    expectEnvelope(await h.call("POST", "/api/v1/circuits", { token: key, body: { name: "json" } }), 415, "unsupported_media_type")
    expectEnvelope(await h.call("POST", "/api/v1/circuits", { token: key }), 415, "unsupported_media_type")
    // Other endpoints take no multipart body.
    expectEnvelope(await h.call("POST", "/api/v1/keys", { token: key, ...multipart([{ name: "name", value: "k" }]) }), 415, "unsupported_media_type")
  })

  it("a live name of the account makes its next version; 409 circuit_name_taken for a built-in name; another account starts at 1", async () => {
    const { key } = await h.newAccount()
    expect((await uploadCircuit(h, key, circomParts("mine"))).version).toBe(1)
    const again = await upload(key, circomParts("mine"))
    expect([again.status, again.json.version]).toEqual([202, 2])
    expectEnvelope(await upload(key, circomParts("multiplier")), 409, "circuit_name_taken")
    const other = await h.newAccount("Other")
    const theirs = await upload(other.key, circomParts("mine"))
    expect([theirs.status, theirs.json.version]).toEqual([202, 1])
  })

  it("a failed newest version is replaced: of 6 concurrent uploads of its name, each accepted one is a new version, the failed one removed", async () => {
    const { key } = await h.newAccount()
    await uploadCircuit(h, key, circomParts("retry", `${SUM_MAIN}// fake:fail compile_error syntax error\n`))
    expect((await settled(h, key, "retry")).json.status).toBe("failed")
    const replies = await Promise.all(Array.from({ length: 6 }, () => upload(key, circomParts("retry"))))
    const accepted = replies.filter((r) => r.status === 202)
    // Those over the account's compiling limit are refused as such, not for the name.
    for (const refused of replies.filter((r) => r.status !== 202)) expectEnvelope(refused, 409, "compilation_limit_reached")
    const numbers = accepted.map((r) => r.json.version as number).sort((a, b) => a - b)
    expect(numbers).toEqual(Array.from({ length: accepted.length }, (_, i) => i + 2))
    expect((await settled(h, key, "retry")).json).toMatchObject({ status: "ready", error: null, version: numbers.at(-1) })
    const own = (await h.call("GET", "/api/v1/circuits", { token: key })).json.circuits.filter((c: { owner: string }) => c.owner !== "builtin")
    expect(own.map((c: { name: string; status: string }) => [c.name, c.status])).toEqual([["retry", "ready"]])
    // The failed version 1 is gone; the accepted ones are all live.
    const versions = (await h.call("GET", "/api/v1/circuits/retry/versions", { token: key })).json.versions
    expect(versions.map((c: { version: number }) => c.version)).toEqual([...numbers].reverse())
    expectEnvelope(await h.call("GET", "/api/v1/circuits/retry@1", { token: key }), 404, "circuit_not_found")
  })

  it("401 before the body is read, 403 without circuits:write", async () => {
    const { key } = await h.newAccount()
    expectEnvelope(await upload("mzk_nope", circomParts("a")), 401, "invalid_api_key")
    const reader = await keyWithScopes(h, key, allBut("circuits:write"), "no-circuit-write")
    expectEnvelope(await upload(reader, circomParts("a")), 403, "insufficient_scope")
    // Refused before the body is read: a body that would be a 400 is never looked at.
    const garbage = await h.call("POST", "/api/v1/circuits", {
      token: reader,
      headers: { "content-type": "multipart/form-data; boundary=xyz" },
      body: "not a multipart body at all"
    })
    expectEnvelope(garbage, 403, "insufficient_scope")
  })
})

describe("GET /api/v1/circuits and /circuits/:name", () => {
  it("lists the built-in circuits, then the account's own newest first, never another account's", async () => {
    const { key } = await h.newAccount()
    const other = await h.newAccount("Other")
    await uploadCircuit(h, key, circomParts("first"))
    await uploadCircuit(h, key, prebuiltParts("second"))
    await uploadCircuit(h, other.key, circomParts("theirs"))
    const reply = await h.call("GET", "/api/v1/circuits", { token: key })
    expect(reply.status).toBe(200)
    const names = reply.json.circuits.map((c: { name: string }) => c.name)
    expect(names.slice(0, 4).sort()).toEqual(["hash_preimage", "merkle_membership", "multiplier", "range"])
    expect(names.slice(4)).toEqual(["second", "first"])
    for (const circuit of reply.json.circuits) {
      expect(Object.keys(circuit).sort()).toEqual(RECORD_FIELDS)
    }
    const multiplier = reply.json.circuits.find((c: { name: string }) => c.name === "multiplier")
    expect(multiplier).toMatchObject({ owner: "builtin", status: "ready", error: null, public_signals: ["c"] })
    expect(multiplier.inputs[0]).toEqual({ name: "a", visibility: "private", kind: "field", dimensions: [] })
  })

  it("gets one with its verification key; unknown names and other accounts' circuits are 404 circuit_not_found", async () => {
    const { key } = await h.newAccount()
    const other = await h.newAccount("Other")
    await uploadCircuit(h, other.key, circomParts("private-one"))
    const range = await h.call("GET", "/api/v1/circuits/range", { token: key })
    expect(range.status).toBe(200)
    expect(range.json).toMatchObject({ name: "range", owner: "builtin" })
    expect("verification_key" in range.json).toBe(true)
    expect(range.json).toMatchObject({ id: null, version: 1 })
    for (const field of ["artifacts", "field_modulus", "updated_at", "source", "type", "circuit"]) {
      expect(field in range.json, field).toBe(false)
    }
    for (const name of ["sudoku", "MULTIPLIER", "%20", "private-one"]) {
      expectEnvelope(await h.call("GET", `/api/v1/circuits/${name}`, { token: key }), 404, "circuit_not_found")
      expectEnvelope(await h.call("GET", `/api/v1/circuits/${name}/verifier.sol`, { token: key }), 404, "circuit_not_found")
      expectEnvelope(await h.call("DELETE", `/api/v1/circuits/${name}`, { token: key }), 404, "circuit_not_found")
    }
    expect((await h.call("GET", "/api/v1/circuits/private-one", { token: other.key })).status).toBe(200)
  })

  it("403 without circuits:read on list, get and verifier.sol", async () => {
    const { key } = await h.newAccount()
    for (const token of [await keyWithScopes(h, key, allBut("circuits:read"), "no-read"), await keyWithScopes(h, key, ["circuits:write"], "writer")]) {
      for (const path of ["/api/v1/circuits", "/api/v1/circuits/multiplier", "/api/v1/circuits/multiplier/verifier.sol"]) {
        expectEnvelope(await h.call("GET", path, { token }), 403, "insufficient_scope")
      }
    }
  })

  it("a failed build is failed with its error: code, message, file and line", async () => {
    const { key } = await h.newAccount()
    await uploadCircuit(h, key, circomParts("broken", `${SUM_MAIN}// fake:fail compile_error syntax error near 'signal'\n`))
    const failed = await settled(h, key, "broken")
    expect(failed.json).toMatchObject({
      status: "failed",
      error: { code: "compile_error", message: "syntax error near 'signal'", file: "sum.circom", line: 10 },
      constraints: null,
      verification_key: null
    })
  })
})

describe("GET /api/v1/circuits/:name/verifier.sol", () => {
  it("is the Solidity source as text/plain; charset=utf-8, for a built-in or a ready circuit", async () => {
    const { key } = await h.newAccount()
    const reply = await h.call("GET", "/api/v1/circuits/multiplier/verifier.sol", { token: key })
    expect(reply.status).toBe(200)
    expect(reply.headers.get("content-type")).toBe("text/plain; charset=utf-8")
    expect(reply.text).toContain("contract")
    expect(Number(reply.headers.get("content-length"))).toBe(Buffer.byteLength(reply.text))
    expectRequestId(reply)
    const head = await h.call("HEAD", "/api/v1/circuits/multiplier/verifier.sol", { token: key })
    expect(head.status).toBe(200)
    expect(head.text).toBe("")
    expect(head.headers.get("content-length")).toBe(reply.headers.get("content-length"))
    await uploadCircuit(h, key, circomParts("own"))
    await settled(h, key, "own")
    const own = await h.call("GET", "/api/v1/circuits/own/verifier.sol", { token: key })
    expect(own.status).toBe(200)
    expect(own.text).toContain("contract")
  })

  it("409 circuit_not_ready while compiling and once failed", async () => {
    const { key } = await h.newAccount()
    await uploadCircuit(h, key, circomParts("slow", `${SUM_MAIN}// fake:duration 600000\n`))
    expectEnvelope(await h.call("GET", "/api/v1/circuits/slow/verifier.sol", { token: key }), 409, "circuit_not_ready")
    await uploadCircuit(h, key, circomParts("bad", `${SUM_MAIN}// fake:fail compile_error nope\n`))
    await settled(h, key, "bad")
    const failed = await h.call("GET", "/api/v1/circuits/bad/verifier.sol", { token: key })
    expectEnvelope(failed, 409, "circuit_not_ready")
    expect(failed.json.error.message).toContain("failed")
  })
})

describe("proofs of accounts' circuits", () => {
  it("proves an own ready circuit with nested array inputs; 409 circuit_not_ready while it compiles; another account's is 400", async () => {
    const { key } = await h.newAccount()
    const other = await h.newAccount("Other")
    await uploadCircuit(h, key, circomParts("sum"))
    await uploadCircuit(h, key, circomParts("later", `${SUM_MAIN}// fake:duration 600000\n`))
    await uploadCircuit(h, other.key, circomParts("theirs"))
    await settled(h, key, "sum")
    await settled(h, other.key, "theirs")
    const queued = await h.call("POST", "/api/v1/proofs", { token: key, body: { type: "sum", inputs: { x: [3, "4"], y: 5 } } })
    expect(queued.status).toBe(202)
    expect(queued.json).toMatchObject({ type: "sum", status: "queued" })
    const notReady = await h.call("POST", "/api/v1/proofs", { token: key, body: { type: "later", inputs: { x: [1, 2], y: 3 } } })
    expectEnvelope(notReady, 409, "circuit_not_ready")
    expectEnvelope(
      await h.call("POST", "/api/v1/proofs/batch", { token: key, body: { proofs: [{ type: "later", inputs: { x: [1, 2], y: 3 } }] } }),
      409,
      "circuit_not_ready"
    )
    const theirs = await h.call("POST", "/api/v1/proofs", { token: key, body: { type: "theirs", inputs: { x: [1, 2], y: 3 } } })
    expectEnvelope(theirs, 400, "invalid_request")
    const unknown = await h.call("POST", "/api/v1/proofs", { token: key, body: { type: "nothing-here", inputs: { x: [1, 2], y: 3 } } })
    // The same answer as for a name nobody has: no other account's circuit is revealed.
    expect(theirs.json.error.message).toBe(unknown.json.error.message.replace("nothing-here", "theirs"))
    expect(detailPaths(theirs)).toEqual(detailPaths(unknown))
    const badShape = await h.call("POST", "/api/v1/proofs", { token: key, body: { type: "sum", inputs: { x: [1, [2]], y: 3 } } })
    expectEnvelope(badShape, 400, "invalid_request")
    expect(detailPaths(badShape)[0]).toMatch(/^inputs\.x/)
  })
})

describe("DELETE /api/v1/circuits/:name", () => {
  it("204, after which the name is free; 409 circuit_in_use while a proof is queued and for a built-in", async () => {
    const { key } = await h.newAccount()
    await uploadCircuit(h, key, circomParts("gone"))
    await settled(h, key, "gone")
    expect((await h.call("POST", "/api/v1/proofs", { token: key, body: { type: "gone", inputs: { x: [1, 2], y: 3 } } })).status).toBe(202)
    expectEnvelope(await h.call("DELETE", "/api/v1/circuits/gone", { token: key }), 409, "circuit_in_use")
    await completeQueuedProofs()
    const removed = await h.call("DELETE", "/api/v1/circuits/gone", { token: key })
    expect(removed.status).toBe(204)
    expect(removed.text).toBe("")
    expectEnvelope(await h.call("GET", "/api/v1/circuits/gone", { token: key }), 404, "circuit_not_found")
    expect((await upload(key, circomParts("gone"))).status).toBe(202)
    const builtin = await h.call("DELETE", "/api/v1/circuits/multiplier", { token: key })
    expectEnvelope(builtin, 409, "circuit_in_use")
    expect(builtin.json.error.message).toMatch(/built-in/i)
  })

  it("403 without circuits:write", async () => {
    const { key } = await h.newAccount()
    await uploadCircuit(h, key, circomParts("kept"))
    const reader = await keyWithScopes(h, key, allBut("circuits:write"), "no-write")
    expectEnvelope(await h.call("DELETE", "/api/v1/circuits/kept", { token: reader }), 403, "insufficient_scope")
    expect((await h.call("GET", "/api/v1/circuits/kept", { token: key })).status).toBe(200)
  })
})

describe("GET /api/v1/proofs/:id/calldata", () => {
  it("{function, arguments, calldata} of a completed proof; 409 proof_not_ready before; 404 for another account's", async () => {
    const { key } = await h.newAccount()
    const other = await h.newAccount("Other")
    await uploadCircuit(h, key, circomParts("onchain"))
    await settled(h, key, "onchain")
    const proof = await h.call("POST", "/api/v1/proofs", { token: key, body: { type: "onchain", inputs: { x: [3, 4], y: 5 } } })
    const path = `/api/v1/proofs/${proof.json.proof_id}/calldata`
    expectEnvelope(await h.call("GET", path, { token: key }), 409, "proof_not_ready")
    await completeQueuedProofs()
    const reply = await h.call("GET", path, { token: key })
    expect(reply.status).toBe(200)
    expect(Object.keys(reply.json).sort()).toEqual(["arguments", "calldata", "function"])
    expect(reply.json.function).toBe("verifyProof(uint256[2],uint256[2][2],uint256[2],uint256[2])")
    const [a, b, c, signals] = reply.json.arguments
    expect(a).toEqual(["1", "2"])
    // The EVM pairing precompile takes each G2 coordinate as (imaginary, real).
    expect(b).toEqual([["4", "3"], ["6", "5"]])
    expect(c).toEqual(["7", "8"])
    // In the circuit's public_signals order: z, then y.
    expect(signals).toEqual(["17", "5"])
    // A 4-byte selector and 10 words: a (2), b (4), c (2), the signals (2).
    expect(reply.json.calldata).toMatch(/^0x[0-9a-f]{648}$/)
    expect(reply.json.calldata.slice(-128)).toBe(BigInt(17).toString(16).padStart(64, "0") + BigInt(5).toString(16).padStart(64, "0"))
    expectEnvelope(await h.call("GET", path, { token: other.key }), 404, "proof_not_found")
    expectEnvelope(await h.call("GET", "/api/v1/proofs/nope/calldata", { token: key }), 404, "proof_not_found")
  })
})

describe("a server without a powers of tau", () => {
  let bare: Harness
  beforeAll(async () => {
    const compiler = FakeCompiler({ setup: { available: false, message: "This server has no powers of tau (the operator's message)" } })
    bare = await harnessOver(ManagedRuntime.make(coreWithBuilds(testCore(undefined, { compiler }))))
  })
  afterAll(() => bare.close())

  it("refuses circom sources at once, 409 setup_unavailable with the server's message, storing nothing; prebuilt uploads are 202", async () => {
    const { key } = await bare.newAccount()
    const refused = await bare.call("POST", "/api/v1/circuits", { token: key, ...multipart(circomParts("sum")) })
    expectEnvelope(refused, 409, "setup_unavailable")
    expect(refused.json.error.message).toBe("This server has no powers of tau (the operator's message)")
    expectEnvelope(await bare.call("GET", "/api/v1/circuits/sum", { token: key }), 404, "circuit_not_found")
    // The upload is checked first: a bad one is told what is wrong with it.
    expectEnvelope(await bare.call("POST", "/api/v1/circuits", { token: key, ...multipart(circomParts("bad name")) }), 400, "invalid_request")
    const prebuilt = await bare.call("POST", "/api/v1/circuits", { token: key, ...multipart(prebuiltParts("prebuilt")) })
    expect([prebuilt.status, prebuilt.json.development_only]).toEqual([202, false])
    expect((await settled(bare, key, "prebuilt")).json.status).toBe("ready")
  })

  it("a Noir program: 409 setup_unavailable without an UltraHonk CRS, after its parts are checked (400 naming the part)", async () => {
    const { key } = await bare.newAccount()
    const manifest = { name: "noir_sources", filename: "Nargo.toml", value: "[package]\nname = \"n\"\ntype = \"bin\"\n" }
    const main = { name: "noir_sources", filename: "src/main.nr", value: "fn main(x: Field) { assert(x != 0); }\n" }
    const refused = await bare.call("POST", "/api/v1/circuits", { token: key, ...multipart([{ name: "name", value: "noir" }, manifest, main]) })
    expectEnvelope(refused, 409, "setup_unavailable")
    expect(refused.json.error.message).toContain("--noir-crs")
    expectEnvelope(await bare.call("GET", "/api/v1/circuits/noir", { token: key }), 404, "circuit_not_found")
    const noManifest = await bare.call("POST", "/api/v1/circuits", { token: key, ...multipart([{ name: "name", value: "noir" }, main]) })
    expectEnvelope(noManifest, 400, "invalid_request")
    expect(detailPaths(noManifest)).toEqual(["noir_sources"])
    const both = await bare.call("POST", "/api/v1/circuits", {
      token: key,
      ...multipart([{ name: "name", value: "noir" }, manifest, main, { name: "noir_program", filename: "p.json", value: "{}" }])
    })
    expectEnvelope(both, 400, "invalid_request")
    expect(detailPaths(both)).toEqual(["noir_program"])
    const escape = await bare.call("POST", "/api/v1/circuits", {
      token: key,
      ...multipart([{ name: "name", value: "noir" }, manifest, main, { name: "noir_sources", filename: "../x.nr", value: "" }])
    })
    expectEnvelope(escape, 400, "invalid_request")
    expect(detailPaths(escape)).toEqual(["noir_sources.2"])
  })
})

describe("upload limits", () => {
  const LIMIT = 64 * 1024
  let small: Harness
  beforeAll(async () => {
    small = await harnessOver(
      ManagedRuntime.make(coreWithBuilds(testCore(), { maxUploadBytes: LIMIT, maxCircuitsPerAccount: 3, maxCompilingPerAccount: 2 }))
    )
  })
  afterAll(() => small.close())

  const bigParts = (bytes: number) => [...prebuiltParts("big"), { name: "r1cs", filename: "big.r1cs", value: "1".repeat(bytes) }]

  it("an upload over the limit is 413 upload_too_large naming it, declared or streamed; other bodies keep their 1 MiB and code", async () => {
    const { key } = await small.newAccount()
    const declared = await small.call("POST", "/api/v1/circuits", { token: key, ...multipart(bigParts(LIMIT)) })
    expectEnvelope(declared, 413, "upload_too_large")
    expect(declared.json.error.message).toContain(`${LIMIT} bytes`)
    // Chunked, with no length to refuse early: refused once past the limit, 4 MiB sent.
    const streamed = await small.call("POST", "/api/v1/circuits", {
      token: key,
      headers: multipart([]).headers,
      chunkedBytes: 4 * 1024 * 1024
    })
    expectEnvelope(streamed, 413, "upload_too_large")
    expect((await small.call("POST", "/api/v1/circuits", { token: key, ...multipart(bigParts(LIMIT - 1024)) })).status).toBe(202)
    expectEnvelope(await small.call("POST", "/api/v1/keys", { token: key, body: "x".repeat(1024 * 1024 + 1) }), 413, "payload_too_large")
  })

  it("409 circuit_limit_reached and compilation_limit_reached, each naming its limit", async () => {
    const { key } = await small.newAccount()
    const slow = (name: string) => circomParts(name, `${SUM_MAIN}// fake:duration 600000\n`)
    await uploadCircuit(small, key, slow("one"))
    await uploadCircuit(small, key, slow("two"))
    const compiling = await small.call("POST", "/api/v1/circuits", { token: key, ...multipart(slow("three")) })
    expectEnvelope(compiling, 409, "compilation_limit_reached")
    expect(compiling.json.error.message).toContain("2")
    const other = await small.newAccount("Other")
    for (const name of ["a", "b", "c"]) {
      await uploadCircuit(small, other.key, circomParts(name))
      await settled(small, other.key, name)
    }
    const full = await small.call("POST", "/api/v1/circuits", { token: other.key, ...multipart(circomParts("d")) })
    expectEnvelope(full, 409, "circuit_limit_reached")
    expect(full.json.error.message).toContain("3")
  })
})
