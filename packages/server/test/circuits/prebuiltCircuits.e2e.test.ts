// Prebuilt uploads over a real port, checked before they are `ready`: a
// zkey of another circuit with as many wires is refused (artifact_mismatch), so is a zkey with a
// G2 point off the curve or outside G2 (invalid_artifacts), and one the build cannot check at all
// (sample_inputs_required) until it comes with sample inputs. A circuit that got through before
// these checks never reports an unverifiable proof as completed.
import {
  ArtifactsRepo,
  BN128_FIELD_MODULUS,
  CircuitsRepo,
  Ids,
  type Principal,
  RateLimits,
  SCOPES,
  type StoredCircuit,
  type Timestamp
} from "@mzk/core"
import { prepareDevelopmentPtau } from "@mzk/proving"
import { makeHttpClient, startWebhookReceiver } from "@mzk/testkit"
import { expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { execFileSync } from "node:child_process"
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe } from "vitest"
import { pointOffset, twistPoints, zkeyG2 } from "../../../prover-native/test/zkeyFixture.js"
import { compileCircom, DEV_PTAU_POWER, serverWithAccount, settle, snarkjsCli, tempDir, uploadPrebuilt } from "./circuits.js"

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/circuits/${name}/main.circom`, import.meta.url))
const builtin = (name: string, file: string) =>
  new Uint8Array(readFileSync(fileURLToPath(new URL(`../../../proving/build/${name}/${file}`, import.meta.url))))
const MULTIPLIER_ZKEY = builtin("multiplier", "multiplier.zkey")

/** The built-in multiplier's zkey with one byte of a G2 point changed, or a B2 point replaced by one outside G2. */
const corrupted = (what: "b2" | "delta2" | "outside") => {
  const zkey = MULTIPLIER_ZKEY.slice()
  let b2 = 0
  while (zkey.subarray(pointOffset(zkey, 7, b2, 128), pointOffset(zkey, 7, b2 + 1, 128)).every((x) => x === 0)) b2++
  const at = what === "delta2" ? pointOffset(zkey, 2, 0, 1) + 4 + 32 + 4 + 32 + 12 + 64 + 64 + 128 + 128 + 64 : pointOffset(zkey, 7, b2, 128)
  if (what === "outside") zkey.set(zkeyG2(twistPoints(1, 50n)[0]!), at)
  else zkey[at + 7] = zkey[at + 7]! ^ 0x20
  return { zkey, b2 }
}

const finished = (c: { status: string }) => c.status !== "compiling"

describe("prebuilt uploads over a real port", () => {
  it.scopedLive("a zkey of another circuit with as many wires fails artifact_mismatch, with or without the r1cs; the right zkey is ready and proves", () =>
    Effect.gen(function*() {
      const receiver = yield* startWebhookReceiver()
      const { baseUrl, keyOf } = yield* serverWithAccount({ workers: true })
      const { token } = yield* keyOf("Prebuilt")
      const api = makeHttpClient(baseUrl, { token })
      yield* Effect.promise(() => api.send("POST", "/api/v1/webhooks", { body: { url: receiver.url, events: ["circuit.failed"] } }))
      const sumsq = yield* compileCircom(fixture("sumsq"))
      const multiplier = yield* compileCircom(fileURLToPath(new URL("../../../proving/circom/multiplier.circom", import.meta.url)))

      // sumsq's witness generator and signal names with multiplier's key: six wires, one output and two private inputs each.
      for (const [name, r1cs, reason] of [["mixed", undefined, /all-zero input.*does not verify/], ["mixed_r1cs", sumsq.r1cs, /constraints are not the r1cs's/]] as const) {
        const upload = yield* Effect.promise(() => uploadPrebuilt(baseUrl, token, name, { wasm: sumsq.wasm, sym: sumsq.sym, zkey: MULTIPLIER_ZKEY, r1cs }))
        expect(upload.status).toBe(202)
        const failed = yield* Effect.promise(() => settle(api, `/api/v1/circuits/${name}`, finished, 90_000))
        expect(failed).toMatchObject({ status: "failed", error: { code: "artifact_mismatch" }, verification_key: null })
        expect(failed.error.message).toMatch(reason)
        const proving = yield* Effect.promise(() => api.send("POST", "/api/v1/proofs", { body: { type: name, inputs: { a: 3, b: 4 } } }))
        expect([proving.status, proving.json.error.code]).toEqual([409, "circuit_not_ready"])
      }
      const events = yield* receiver.waitFor(2).pipe(Effect.timeout("30 seconds"))
      expect(events.map((e) => JSON.parse(e.rawBody.toString("utf8")).data.error.code)).toEqual(["artifact_mismatch", "artifact_mismatch"])

      // The documented parts, unchanged: wasm, zkey and sym of one circuit.
      expect((yield* Effect.promise(() => uploadPrebuilt(baseUrl, token, "mult", { wasm: multiplier.wasm, sym: multiplier.sym, zkey: MULTIPLIER_ZKEY }))).status).toBe(202)
      expect(yield* Effect.promise(() => settle(api, "/api/v1/circuits/mult", finished, 90_000))).toMatchObject({
        status: "ready", constraints: 3, public_signals: ["c"], development_only: false
      })
      const created = yield* Effect.promise(() => api.send("POST", "/api/v1/proofs", { body: { type: "mult", inputs: { a: 3, b: 11 } } }))
      const proof = yield* Effect.promise(() => settle(api, `/api/v1/proofs/${created.json.proof_id}`, (p) => p.status === "completed" || p.status === "failed"))
      expect(proof).toMatchObject({ status: "completed", public_inputs: { c: "33" } })
      expect((yield* Effect.promise(() => api.send("GET", `/api/v1/proofs/${proof.proof_id}/verify`))).json).toMatchObject({ valid: true })
    }), 240_000)

  it.scopedLive("a zkey with a byte of δ₂ or of a B₂ point changed, or a B₂ point outside G2, fails invalid_artifacts naming the point", () =>
    Effect.gen(function*() {
      const { baseUrl, keyOf } = yield* serverWithAccount({ workers: true })
      const { token } = yield* keyOf("Corrupt keys")
      const api = makeHttpClient(baseUrl, { token })
      const multiplier = yield* compileCircom(fileURLToPath(new URL("../../../proving/circom/multiplier.circom", import.meta.url)))
      for (const what of ["b2", "delta2", "outside"] as const) {
        const { zkey, b2 } = corrupted(what)
        expect((yield* Effect.promise(() => uploadPrebuilt(baseUrl, token, what, { wasm: multiplier.wasm, sym: multiplier.sym, r1cs: multiplier.r1cs, zkey }))).status).toBe(202)
        const failed = yield* Effect.promise(() => settle(api, `/api/v1/circuits/${what}`, finished, 90_000))
        expect(failed).toMatchObject({ status: "failed", error: { code: "invalid_artifacts" } })
        expect(failed.error.message).toContain({
          b2: `point ${b2} of section 7 (B2 points) is not on the curve`,
          delta2: "delta2 (section 2, the header) is not on the curve",
          outside: `point ${b2} of section 7 (B2 points) is on the twist but not in the r-order subgroup G2`
        }[what])
      }
    }), 240_000)

  it.scopedLive("an upload whose all-zero input fails the circuit needs sample_inputs (or its r1cs): sample_inputs_required without, ready with", () =>
    Effect.gen(function*() {
      const { baseUrl, keyOf, ptauDir } = yield* serverWithAccount({ workers: true })
      const { token } = yield* keyOf("Sample inputs")
      const api = makeHttpClient(baseUrl, { token })
      const nonzero = yield* compileCircom(fixture("nonzero"))
      // Its key, set up (snarkjs's command line) against a development ptau (the server makes none at
      // start where it sets development circuits up natively: made here then).
      const ptau = yield* prepareDevelopmentPtau({ timeoutMs: 120_000, memoryBytes: 2 ** 31, developmentPtau: { power: DEV_PTAU_POWER, dir: ptauDir } })
      const dir = yield* tempDir("setup")
      writeFileSync(join(dir, "nonzero.r1cs"), nonzero.r1cs)
      execFileSync(snarkjsCli, ["groth16", "setup", "nonzero.r1cs", ptau, "nonzero.zkey"], { cwd: dir, stdio: "pipe" })
      const zkey = new Uint8Array(readFileSync(join(dir, "nonzero.zkey")))

      expect((yield* Effect.promise(() => uploadPrebuilt(baseUrl, token, "unchecked", { wasm: nonzero.wasm, sym: nonzero.sym, zkey }))).status).toBe(202)
      const unchecked = yield* Effect.promise(() => settle(api, "/api/v1/circuits/unchecked", finished, 90_000))
      expect(unchecked).toMatchObject({ status: "failed", error: { code: "sample_inputs_required" } })
      expect(unchecked.error.message).toMatch(/all-zero input fails this circuit \(Assert Failed.*send sample_inputs .* or the circuit's r1cs/)

      const notJson = yield* Effect.promise(() => uploadPrebuilt(baseUrl, token, "bad", { wasm: nonzero.wasm, sym: nonzero.sym, zkey, sample_inputs: "{a: 5}" }))
      expect([notJson.status, notJson.json.error.code, notJson.json.error.details[0].path]).toEqual([400, "invalid_request", "sample_inputs"])

      const upload = { wasm: nonzero.wasm, sym: nonzero.sym, zkey, sample_inputs: JSON.stringify({ a: "5" }) }
      expect((yield* Effect.promise(() => uploadPrebuilt(baseUrl, token, "sampled", upload))).status).toBe(202)
      expect(yield* Effect.promise(() => settle(api, "/api/v1/circuits/sampled", finished, 90_000))).toMatchObject({ status: "ready", public_signals: ["c"] })
      const created = yield* Effect.promise(() => api.send("POST", "/api/v1/proofs", { body: { type: "sampled", inputs: { a: 7 } } }))
      const proof = yield* Effect.promise(() => settle(api, `/api/v1/proofs/${created.json.proof_id}`, (p) => p.status === "completed" || p.status === "failed"))
      expect(proof).toMatchObject({ status: "completed", public_inputs: { c: "49" } })
    }), 240_000)

  it.scopedLive("a mismatched circuit made ready before these checks: its proofs end failed with verification_failed, never completed, and are not charged", () =>
    Effect.gen(function*() {
      const receiver = yield* startWebhookReceiver()
      const { baseUrl, context, keyOf } = yield* serverWithAccount({ workers: true })
      const { account, token } = yield* keyOf("Old circuit")
      const api = makeHttpClient(baseUrl, { token })
      yield* Effect.promise(() => api.send("POST", "/api/v1/webhooks", { body: { url: receiver.url, events: ["proof.completed", "proof.failed"] } }))
      const sumsq = yield* compileCircom(fixture("sumsq"))
      // What the earlier check let through: sumsq's wasm and sym with multiplier's key, stored `ready`.
      yield* Effect.gen(function*() {
        const artifacts = yield* ArtifactsRepo
        const [wasm, zkey, sym] = yield* Effect.all([sumsq.wasm, MULTIPLIER_ZKEY, sumsq.sym].map((bytes) => artifacts.put(bytes)))
        const now = new Date().toISOString() as Timestamp
        const circuit: StoredCircuit = {
          id: yield* (yield* Ids).make("circuit"),
          name: "accepted_before",
          version: 1,
          owner: account,
          proving_system: "groth16",
          proving_systems: ["groth16"],
          status: "ready",
          error: null,
          description: null,
          constraints: 3,
          inputs: [
            { name: "a", visibility: "private", kind: "field", dimensions: [] },
            { name: "b", visibility: "private", kind: "field", dimensions: [] }
          ],
          public_signals: ["c"],
          verification_key: JSON.parse(readFileSync(fileURLToPath(new URL("../../../proving/build/multiplier/verification_key.json", import.meta.url)), "utf8")),
          development_only: false,
          field_modulus: BN128_FIELD_MODULUS,
          artifacts: { wasm: wasm!, zkey: zkey!, sym: sym!, r1cs: null },
          created_at: now,
          updated_at: now,
          source: { kind: "artifacts", wasm: wasm!, zkey: zkey!, sym: sym!, r1cs: null },
          lease_expires_at: null,
          attempts: 1,
          metadata: {}
        }
        expect(yield* (yield* CircuitsRepo).insert(circuit, { maxCircuits: 100, maxCompiling: 100 })).toEqual(Either.right({ version: 1, replaced: null }))
      }).pipe(Effect.provide(context))
      const principal: Principal = { account_id: account, scopes: SCOPES, via: { kind: "session" } }
      const dailyRemaining = Effect.flatMap(RateLimits, (r) => r.admitProofRequest(principal.account_id, { proofs: 0 })).pipe(
        Effect.map((windows) => windows.find((w) => w.policy === "daily")!.remaining),
        Effect.provide(context)
      )
      const before = yield* dailyRemaining

      const created = yield* Effect.promise(() => api.send("POST", "/api/v1/proofs", { body: { type: "accepted_before", inputs: { a: 3, b: 4 } } }))
      expect(created.status).toBe(202)
      const proof = yield* Effect.promise(() => settle(api, `/api/v1/proofs/${created.json.proof_id}`, (p) => p.status === "completed" || p.status === "failed"))
      expect(proof).toMatchObject({ status: "failed", proof_blob: null, error: { code: "verification_failed" } })
      const [event] = yield* receiver.waitFor(1).pipe(Effect.timeout("30 seconds"))
      expect(JSON.parse(event!.rawBody.toString("utf8"))).toMatchObject({
        type: "proof.failed",
        data: { proof_id: proof.proof_id, status: "failed", error: { code: "verification_failed" } }
      })
      expect(yield* dailyRemaining).toBe(before)
      const completed = yield* Effect.promise(() => api.send("GET", "/api/v1/events?type=proof.completed"))
      expect(completed.json.events).toEqual([])
    }), 240_000)
})
