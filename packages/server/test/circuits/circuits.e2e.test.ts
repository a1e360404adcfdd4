import { Accounts, ApiKeys } from "@mzk/core"
import { makeHttpClient, startWebhookReceiver, verifyWebhookSignature } from "@mzk/testkit"
import { expect, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { execFileSync } from "node:child_process"
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe } from "vitest"
import { BOUNDED_SQUARES, serverWithAccount, settle, snarkjsCli, tempDir, uploadCircuit } from "./circuits.js"
import { startServer } from "../realServer.js"

describe("an account's own circuit over a real port", () => {
  it.scopedLive("upload → compiling → ready (circuit.ready) → proof → verify → checked by snarkjs and its calldata", () =>
    Effect.gen(function*() {
      const receiver = yield* startWebhookReceiver()
      const { baseUrl, keyOf } = yield* serverWithAccount({ workers: true })
      const { account, token } = yield* keyOf("Circuit owner")
      const api = makeHttpClient(baseUrl, { token })
      const webhook = yield* Effect.promise(() =>
        api.send("POST", "/api/v1/webhooks", { body: { url: receiver.url, events: ["circuit.ready", "proof.completed"] } }))
      expect(webhook.status).toBe(201)

      const uploaded = yield* Effect.promise(() => uploadCircuit(baseUrl, token, "bounded_squares"))
      expect(uploaded.status).toBe(202)
      expect(uploaded.json).toMatchObject({ name: "bounded_squares", owner: account, status: "compiling", error: null })
      expect(Object.keys(uploaded.json)).not.toContain("artifacts")

      const ready = yield* Effect.promise(() => settle(api, "/api/v1/circuits/bounded_squares", (c) => c.status !== "compiling", 90_000))
      expect(ready).toMatchObject({
        status: "ready",
        constraints: 51,
        development_only: true,
        // In the circuit's wire order: public inputs, then private ones.
        inputs: [
          { name: "bound", visibility: "public", kind: "field", dimensions: [] },
          { name: "xs", visibility: "private", kind: "field", dimensions: [3] }
        ],
        public_signals: ["total", "bound"]
      })
      expect(ready.verification_key).toMatchObject({ protocol: "groth16", curve: "bn128", nPublic: 2 })
      const [readyEvent] = yield* receiver.waitFor(1).pipe(Effect.timeout("30 seconds"))
      verifyWebhookSignature(readyEvent!.rawBody, readyEvent!.headers["service-signature"] as string, webhook.json.secret)
      expect(JSON.parse(readyEvent!.rawBody.toString("utf8"))).toMatchObject({
        type: "circuit.ready",
        data: { name: "bounded_squares", status: "ready", constraints: 51, development_only: true }
      })

      const listed = yield* Effect.promise(() => api.send("GET", "/api/v1/circuits"))
      expect(listed.json.circuits.map((c: { name: string; owner: string }) => [c.name, c.owner])).toEqual([
        ["multiplier", "builtin"],
        ["range", "builtin"],
        ["hash_preimage", "builtin"],
        ["merkle_membership", "builtin"],
        ["bounded_squares", account]
      ])

      const created = yield* Effect.promise(() =>
        api.send("POST", "/api/v1/proofs", { body: { type: "bounded_squares", inputs: { xs: [1, 2, "3"], bound: 10 } } }))
      expect(created.status).toBe(202)
      const proof = yield* Effect.promise(() => settle(api, `/api/v1/proofs/${created.json.proof_id}`, (p) => p.status === "completed" || p.status === "failed"))
      expect(proof).toMatchObject({ status: "completed", type: "bounded_squares", circuit: "bounded_squares", public_inputs: { total: "14", bound: "10" } })

      const verified = yield* Effect.promise(() => api.send("GET", `/api/v1/proofs/${proof.proof_id}/verify`))
      expect(verified.json).toMatchObject({ valid: true, circuit: "bounded_squares" })

      // Anyone can check it with snarkjs and the circuit's published verification key.
      const dir = yield* tempDir("verify")
      writeFileSync(join(dir, "vk.json"), JSON.stringify(ready.verification_key))
      writeFileSync(join(dir, "proof.json"), Buffer.from(proof.proof_blob, "base64").toString("utf8"))
      writeFileSync(join(dir, "public.json"), JSON.stringify(["14", "10"]))
      expect(execFileSync(snarkjsCli, ["groth16", "verify", "vk.json", "public.json", "proof.json"], { cwd: dir, encoding: "utf8" })).toContain("OK")
      writeFileSync(join(dir, "public.json"), JSON.stringify(["15", "10"]))
      expect(() => execFileSync(snarkjsCli, ["groth16", "verify", "vk.json", "public.json", "proof.json"], { cwd: dir, stdio: "pipe" })).toThrow()

      const calldata = yield* Effect.promise(() => api.send("GET", `/api/v1/proofs/${proof.proof_id}/calldata`))
      expect(calldata.status).toBe(200)
      expect(calldata.json.function).toBe("verifyProof(uint256[2],uint256[2][2],uint256[2],uint256[2])")
      expect(calldata.json.arguments[3]).toEqual(["14", "10"])
      // selector + 2 + 4 + 2 + 2 words of 32 bytes
      expect(calldata.json.calldata).toMatch(new RegExp(`^0x[0-9a-f]{${8 + 10 * 64}}$`))

      const verifier = yield* Effect.promise(() => api.send("GET", "/api/v1/circuits/bounded_squares/verifier.sol"))
      expect(verifier.status).toBe(200)
      expect(verifier.headers.get("content-type")).toMatch(/^text\/plain/)
      expect(verifier.text).toContain("function verifyProof(")
    }), 180_000)

  it.scopedLive("a build that fails ends `failed` with the compiler's line, fires circuit.failed, and keeps nothing half-built", () =>
    Effect.gen(function*() {
      const receiver = yield* startWebhookReceiver()
      const { baseUrl, keyOf } = yield* serverWithAccount({ workers: true })
      const { token } = yield* keyOf("Broken circuits")
      const api = makeHttpClient(baseUrl, { token })
      yield* Effect.promise(() => api.send("POST", "/api/v1/webhooks", { body: { url: receiver.url, events: ["circuit.failed"] } }))

      const syntax = yield* Effect.promise(() =>
        uploadCircuit(baseUrl, token, "syntax", { main: "pragma circom 2.1.0;\n\ntemplate T() {\n  signal input a\n}\ncomponent main = T();\n" }))
      expect(syntax.status).toBe(202)
      const failed = yield* Effect.promise(() => settle(api, "/api/v1/circuits/syntax", (c) => c.status !== "compiling", 90_000))
      expect(failed).toMatchObject({ status: "failed", error: { code: "compile_error", file: "main.circom" }, constraints: null, verification_key: null })
      expect(failed.error.line).toBeGreaterThanOrEqual(4)
      const [event] = yield* receiver.waitFor(1).pipe(Effect.timeout("30 seconds"))
      expect(JSON.parse(event!.rawBody.toString("utf8"))).toMatchObject({ type: "circuit.failed", data: { name: "syntax", error: { code: "compile_error" } } })

      const escape = yield* Effect.promise(() =>
        uploadCircuit(baseUrl, token, "escape", { main: "pragma circom 2.1.0;\ninclude \"../../etc/passwd\";\ntemplate T() { signal input a; }\ncomponent main = T();\n" }))
      expect(escape.status).toBe(202)
      expect(yield* Effect.promise(() => settle(api, "/api/v1/circuits/escape", (c) => c.status !== "compiling", 90_000))).toMatchObject({
        status: "failed",
        error: { code: "include_outside_upload", file: "main.circom", line: 2 }
      })

      // Proving a failed circuit is refused; removing it frees the name.
      const proving = yield* Effect.promise(() => api.send("POST", "/api/v1/proofs", { body: { type: "syntax", inputs: { a: 1 } } }))
      expect([proving.status, proving.json.error.code]).toEqual([409, "circuit_not_ready"])
      expect((yield* Effect.promise(() => api.send("DELETE", "/api/v1/circuits/syntax"))).status).toBe(204)
      expect((yield* Effect.promise(() => api.send("GET", "/api/v1/circuits/syntax"))).status).toBe(404)
    }), 180_000)

  it.scopedLive("refusals: built-in names taken, still compiling, other accounts' circuits, scopes, upload size", () =>
    Effect.gen(function*() {
      // No build loop in this server: uploads stay `compiling`.
      const { baseUrl, keyOf } = yield* serverWithAccount({ workers: false, maxUploadBytes: 64 * 1024 })
      const owner = yield* keyOf("Owner")
      const other = yield* keyOf("Other")
      const api = makeHttpClient(baseUrl, { token: owner.token })
      const otherApi = makeHttpClient(baseUrl, { token: other.token })

      expect((yield* Effect.promise(() => uploadCircuit(baseUrl, owner.token, "mine"))).status).toBe(202)
      // The account's own name again is its next version, not a refusal.
      const again = yield* Effect.promise(() => uploadCircuit(baseUrl, owner.token, "mine"))
      expect([again.status, again.json.version]).toEqual([202, 2])
      const builtin = yield* Effect.promise(() => uploadCircuit(baseUrl, owner.token, "multiplier"))
      expect([builtin.status, builtin.json.error.code]).toEqual([409, "circuit_name_taken"])
      const badName = yield* Effect.promise(() => uploadCircuit(baseUrl, owner.token, "no spaces"))
      expect([badName.status, badName.json.error.code]).toEqual([400, "invalid_request"])

      const compiling = yield* Effect.promise(() => api.send("POST", "/api/v1/proofs", { body: { type: "mine", inputs: { xs: [1, 2, 3], bound: 10 } } }))
      expect([compiling.status, compiling.json.error.code]).toEqual([409, "circuit_not_ready"])

      // Another account's circuit does not exist for this one, as an unknown type does not.
      expect((yield* Effect.promise(() => otherApi.send("GET", "/api/v1/circuits/mine"))).status).toBe(404)
      expect((yield* Effect.promise(() => otherApi.send("DELETE", "/api/v1/circuits/mine"))).status).toBe(404)
      const foreign = yield* Effect.promise(() => otherApi.send("POST", "/api/v1/proofs", { body: { type: "mine", inputs: {} } }))
      const unknown = yield* Effect.promise(() => otherApi.send("POST", "/api/v1/proofs", { body: { type: "nothing_here", inputs: {} } }))
      expect([foreign.status, foreign.json.error.details]).toEqual([400, [{ path: "type", message: 'unknown proof type "mine"' }]])
      expect(unknown.status).toBe(400)
      // The other account may use the same name for its own circuit.
      expect((yield* Effect.promise(() => uploadCircuit(baseUrl, other.token, "mine"))).status).toBe(202)

      const reader = yield* Effect.promise(() => api.send("POST", "/api/v1/keys", { body: { name: "reader", scopes: ["circuits:read"] } }))
      const readOnly = reader.json.key as string
      expect((yield* Effect.promise(() => uploadCircuit(baseUrl, readOnly, "by_reader"))).json.error.code).toBe("insufficient_scope")
      expect((yield* Effect.promise(() => makeHttpClient(baseUrl, { token: readOnly }).send("GET", "/api/v1/circuits/mine"))).status).toBe(200)

      const big = yield* Effect.promise(() => uploadCircuit(baseUrl, owner.token, "big", { main: "// " + "x".repeat(128 * 1024) }))
      expect([big.status, big.json.error.code]).toEqual([413, "upload_too_large"])
      expect(big.json.error.message).toContain("65536")
      expect((yield* Effect.promise(() => api.send("GET", "/api/v1/circuits/big"))).status).toBe(404)
    }), 120_000)
})

/** `POST /api/v1/circuits` of prebuilt artifacts: the built-in multiplier's wasm and zkey with a sym of its signals. */
const uploadPrebuilt = async (baseUrl: string, token: string, name: string) => {
  const built = fileURLToPath(new URL("../../../proving/build/multiplier/", import.meta.url))
  const form = new FormData()
  form.append("name", name)
  form.append("wasm", new Blob([readFileSync(join(built, "multiplier.wasm"))]), "multiplier.wasm")
  form.append("zkey", new Blob([readFileSync(join(built, "multiplier.zkey"))]), "multiplier.zkey")
  form.append("sym", new Blob(["1,1,0,main.c\n2,2,0,main.a\n3,3,0,main.b\n"]), "multiplier.sym")
  const response = await fetch(`${baseUrl}/api/v1/circuits`, { method: "POST", body: form, headers: { authorization: `Bearer ${token}` } })
  return { status: response.status, json: await response.json() as Record<string, any> }
}

describe("circuit uploads as a new user meets them, over a real port", () => {
  it.scopedLive("development_only is known at upload: true in the 202 and in the listing while compiling, with a development ptau", () =>
    Effect.gen(function*() {
      // No build loop: the upload stays compiling, and the record must already say how it will be set up.
      const { baseUrl, keyOf } = yield* serverWithAccount({ workers: false })
      const { token } = yield* keyOf("Developer")
      const uploaded = yield* Effect.promise(() => uploadCircuit(baseUrl, token, "squares"))
      expect(uploaded.status).toBe(202)
      expect(uploaded.json).toMatchObject({ status: "compiling", development_only: true })
      const api = makeHttpClient(baseUrl, { token })
      const listed = (yield* Effect.promise(() => api.send("GET", "/api/v1/circuits"))).json.circuits
      expect(listed.find((c: { name: string }) => c.name === "squares")).toMatchObject({ status: "compiling", development_only: true })
      expect((yield* Effect.promise(() => api.send("GET", "/api/v1/circuits/squares"))).json.development_only).toBe(true)
    }), 120_000)

  it.scopedLive("a file of the upload that main never includes is ignored, whatever it holds", () =>
    Effect.gen(function*() {
      const { baseUrl, keyOf } = yield* serverWithAccount({ workers: true })
      const { token } = yield* keyOf("Stray files")
      const api = makeHttpClient(baseUrl, { token })
      const uploaded = yield* Effect.promise(() =>
        uploadCircuit(baseUrl, token, "squares", {
          main: BOUNDED_SQUARES.main,
          sources: {
            ...BOUNDED_SQUARES.sources,
            // An old experiment left in the folder: it includes a file above the upload and does not even parse.
            "old/scratch.circom": "pragma circom 2.1.0;\ninclude \"../../../shared/elsewhere.circom\";\ntemplate Broken( {\n"
          }
        }))
      expect(uploaded.status).toBe(202)
      expect(yield* Effect.promise(() => settle(api, "/api/v1/circuits/squares", (c) => c.status !== "compiling", 90_000))).toMatchObject({
        status: "ready",
        constraints: 51,
        error: null
      })
    }), 180_000)

  it.scopedLive("an include of a file that was not uploaded fails compile_error at its file and line, saying how to send it", () =>
    Effect.gen(function*() {
      const { baseUrl, keyOf } = yield* serverWithAccount({ workers: true })
      const { token } = yield* keyOf("Missing include")
      const api = makeHttpClient(baseUrl, { token })
      // main.circom includes lib/square.circom on line 4; the part was left out.
      expect((yield* Effect.promise(() => uploadCircuit(baseUrl, token, "squares", { main: BOUNDED_SQUARES.main }))).status).toBe(202)
      const failed = yield* Effect.promise(() => settle(api, "/api/v1/circuits/squares", (c) => c.status !== "compiling", 90_000))
      expect(failed).toMatchObject({ status: "failed", error: { code: "compile_error", file: "main.circom", line: 4 } })
      expect(failed.error.message).toContain("lib/square.circom")
      expect(failed.error.message).toMatch(/"sources" part/)
      expect(failed.error.message).toContain("circomlib/circuits/")
      // circom's own advice is for its command line, which an API user does not have.
      expect(failed.error.message).not.toMatch(/-l\b|include paths|compilation option/)
    }), 180_000)

  it.scopedLive("a failed circuit's name is free for the corrected upload: 202, built, audited; the failed one is gone by name", () =>
    Effect.gen(function*() {
      const receiver = yield* startWebhookReceiver()
      const { baseUrl, keyOf } = yield* serverWithAccount({ workers: true })
      const { token } = yield* keyOf("Second try")
      const api = makeHttpClient(baseUrl, { token })
      yield* Effect.promise(() => api.send("POST", "/api/v1/webhooks", { body: { url: receiver.url, events: ["circuit.failed", "circuit.ready"] } }))
      const broken = BOUNDED_SQUARES.main.replace("signal input bound;", "signal input bound")
      expect((yield* Effect.promise(() => uploadCircuit(baseUrl, token, "squares", { ...BOUNDED_SQUARES, main: broken }))).status).toBe(202)
      const failed = yield* Effect.promise(() => settle(api, "/api/v1/circuits/squares", (c) => c.status !== "compiling", 90_000))
      expect(failed).toMatchObject({ status: "failed", error: { code: "compile_error" } })

      const fixed = yield* Effect.promise(() => uploadCircuit(baseUrl, token, "squares"))
      expect([fixed.status, fixed.json.status, fixed.json.error]).toEqual([202, "compiling", null])
      expect(fixed.json.created_at >= failed.created_at).toBe(true)
      const ready = yield* Effect.promise(() => settle(api, "/api/v1/circuits/squares", (c) => c.status !== "compiling", 90_000))
      expect(ready).toMatchObject({ status: "ready", constraints: 51, error: null })
      const listed = (yield* Effect.promise(() => api.send("GET", "/api/v1/circuits"))).json.circuits
      expect(listed.filter((c: { name: string }) => c.name === "squares").map((c: { status: string }) => c.status)).toEqual(["ready"])

      // The audit log: the failed circuit removed (replaced by the new one), then the new one created.
      const audit = (yield* Effect.promise(() => api.send("GET", "/api/v1/audit-log"))).json.entries as Array<any>
      const circuits = audit.filter((e) => e.target.type === "circuit").reverse()
      expect(circuits.map((e) => [e.action, e.target.name])).toEqual([
        ["circuit.created", "squares"],
        ["circuit.removed", "squares"],
        ["circuit.created", "squares"]
      ])
      const [first, removed, second] = circuits
      expect(removed.target.id).toBe(first.target.id)
      expect(second.target.id).not.toBe(first.target.id)
      expect(removed.changes).toEqual([{ field: "replaced_by", from: null, to: second.target.id }])
      const events = yield* receiver.waitFor(2).pipe(Effect.timeout("30 seconds"))
      expect(events.map((e) => JSON.parse(e.rawBody.toString("utf8")).type)).toEqual(["circuit.failed", "circuit.ready"])
    }), 240_000)

  it.scopedLive("a server without a powers of tau refuses circom sources at once (409 setup_unavailable, nothing stored); prebuilt uploads work", () =>
    Effect.gen(function*() {
      const server = yield* startServer({ workers: true })
      const account = yield* Effect.flatMap(Accounts, (a) => a.create({ name: "No ptau" })).pipe(Effect.provide(server.context))
      const key = yield* Effect.flatMap(ApiKeys, (k) => k.create(account.id, { name: "tests" })).pipe(Effect.provide(server.context))
      const token = Redacted.value(key.secret)
      const api = makeHttpClient(server.baseUrl, { token })
      const refused = yield* Effect.promise(() => uploadCircuit(server.baseUrl, token, "squares"))
      expect([refused.status, refused.json.error?.code]).toEqual([409, "setup_unavailable"])
      // It names both ways to give the server one: the command line's and the embedding application's.
      for (const way of ["--ptau", "MZK_PTAU", "--dev-ptau", "createMzk", "circuits.ptau", "circuits.developmentPtau"]) {
        expect(refused.json.error.message).toContain(way)
      }
      expect((yield* Effect.promise(() => api.send("GET", "/api/v1/circuits/squares"))).status).toBe(404)
      const audit = (yield* Effect.promise(() => api.send("GET", "/api/v1/audit-log"))).json.entries as Array<{ action: string }>
      expect(audit.map((e) => e.action)).not.toContain("circuit.created")

      const prebuilt = yield* Effect.promise(() => uploadPrebuilt(server.baseUrl, token, "prebuilt"))
      expect([prebuilt.status, prebuilt.json.development_only]).toEqual([202, false])
    }), 120_000)
})
