// POST /verifications over a real port: proofs mzk did not make (snarkjs, run by the test) for
// Groth16, PLONK and FFLONK accepted, tampered ones `valid: false`, every malformed input a 400
// naming its field, registered keys, scope, metering, and `proof.verified` only for own proofs.
import { Accounts, ApiKeys } from "@mzk/core"
import { makeHttpClient } from "@mzk/testkit"
import { expect, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { beforeAll, describe } from "vitest"
import { startServer } from "../realServer.js"
import { type Foreign, makeForeignProofs } from "./verifications.fixtures.js"

const Q = 21888242871839275222246405745257275088696311157297823662689037894645226208583n
const R = 21888242871839275222246405745257275088548364400416034343698204186575808495617n

let foreign: Record<"groth16" | "plonk" | "fflonk", Foreign>
beforeAll(async () => {
  foreign = await makeForeignProofs()
}, 300_000)

const clone = <A>(value: A): A => JSON.parse(JSON.stringify(value))
const request = (system: "groth16" | "plonk" | "fflonk", change: (body: Record<string, any>) => void = () => {}) => {
  const body: Record<string, any> = { proving_system: system, verification_key: clone(foreign[system].key), proof: clone(foreign[system].proof), public_signals: [...foreign[system].signals] }
  change(body)
  return body
}

describe("POST /verifications over a real port", () => {
  it.scopedLive("verifies foreign proofs of each system, refuses malformed ones with their field, keeps keys, and records own proofs only", () =>
    Effect.gen(function*() {
      const { baseUrl, context } = yield* startServer({ workers: true })
      const account = yield* Effect.flatMap(Accounts, (a) => a.create({ name: "Verifier" })).pipe(Effect.provide(context))
      const first = yield* Effect.flatMap(ApiKeys, (k) => k.create(account.id, { name: "all" })).pipe(Effect.provide(context))
      const client = makeHttpClient(baseUrl, { token: Redacted.value(first.secret), timeoutMs: 60_000 })
      const call = (method: string, path: string, body?: unknown) => Effect.promise(() => client.send(method, path, { body }))
      const verify = (body: unknown) => call("POST", "/api/v1/verifications", body)
      const refused = (body: unknown, path: string) =>
        Effect.gen(function*() {
          const reply = yield* verify(body)
          expect(reply.status, JSON.stringify(reply.json)).toBe(400)
          expect(reply.json.error.code).toBe("invalid_request")
          expect(reply.json.error.details.map((d: { path: string }) => d.path)).toContain(path)
          return reply
        })

      // Each system: the foreign proof holds; a tampered public signal does not (200, valid: false).
      for (const system of ["groth16", "plonk", "fflonk"] as const) {
        const ok = yield* verify(request(system))
        expect(ok.status, JSON.stringify(ok.json)).toBe(200)
        expect(ok.json).toMatchObject({ valid: true, proving_system: system, proof_id: null, verification_key_id: null, circuit: null })
        expect(ok.headers.get("ratelimit-policy")).toBe('"key";q=60;w=60, "daily";q=5000;w=86400')
        expect(ok.headers.get("ratelimit")).toMatch(/^"key";r=\d+;t=\d+$/)
        const tampered = yield* verify(request(system, (b) => { b.public_signals[0] = String((BigInt(b.public_signals[0]) + 1n) % R) }))
        expect(tampered.status).toBe(200)
        expect(tampered.json.valid).toBe(false)
      }
      const plonkEval = yield* verify(request("plonk", (b) => { b.proof.eval_a = String((BigInt(b.proof.eval_a) + 1n) % R) }))
      expect(plonkEval.json.valid).toBe(false)

      // Malformed inputs: each a 400 naming the field, never a 500.
      yield* refused(request("groth16", (b) => { b.proof.pi_a[1] = String((BigInt(b.proof.pi_a[1]) + 1n) % Q) }), "proof.pi_a")
      yield* refused(request("groth16", (b) => { b.proof.pi_c[0] = String(BigInt(b.proof.pi_c[0]) + Q) }), "proof.pi_c.0")
      yield* refused(request("groth16", (b) => { b.verification_key.vk_delta_2[0][0] = "1" }), "verification_key.vk_delta_2")
      yield* refused(request("plonk", (b) => { b.proof.eval_b = R.toString() }), "proof.eval_b")
      yield* refused(request("fflonk", (b) => { b.proof.evaluations.inv = "01" }), "proof.evaluations.inv")
      yield* refused(request("fflonk", (b) => { b.proof.polynomials.C1[0] = "0" }), "proof.polynomials.C1")
      yield* refused(request("groth16", (b) => { b.public_signals.push("1") }), "public_signals")
      yield* refused(request("groth16", (b) => { b.public_signals[0] = R.toString() }), "public_signals.0")
      yield* refused(request("groth16", (b) => { b.proof.protocol = "plonk" }), "proof.protocol")
      yield* refused(request("plonk", (b) => { b.verification_key.curve = "bls12381" }), "verification_key.curve")
      yield* refused(request("groth16", (b) => { b.proof = "garbage" }), "proof")
      yield* refused(request("groth16", (b) => { b.public_signals = [1, 2] }), "public_signals.0")
      yield* refused(request("groth16", (b) => { b.verification_key.IC = 7 }), "verification_key.IC")
      yield* refused(request("groth16", (b) => { b.verification_key.nPublic = -1 }), "verification_key.nPublic")
      yield* refused(request("groth16", (b) => { b.proving_system = "stark" }), "proving_system")
      yield* refused(request("groth16", (b) => { b.proving_system = "ultra_honk" }), "proving_system")
      yield* refused(request("groth16", (b) => { b.circuit = "multiplier" }), "circuit")
      yield* refused(request("groth16", (b) => { delete b.verification_key }), "")
      // A Groth16 proof submitted as PLONK (with its key, or with a PLONK key): 400, never a 500.
      yield* refused(request("groth16", (b) => { b.proving_system = "plonk" }), "verification_key.protocol")
      yield* refused(request("plonk", (b) => { b.proof = clone(foreign.groth16.proof) }), "proof.A")
      // A proof of another circuit of the same system: well formed, not valid.
      const crossed = yield* verify(request("fflonk", (b) => { b.proof = clone(foreign.plonk.proof) }))
      expect(crossed.status).toBe(400)

      // A registered key, named by id; listed, fetched, deleted, then refused.
      const registered = yield* call("POST", "/api/v1/verification-keys", { proving_system: "plonk", verification_key: foreign.plonk.key, name: "plonk demo" })
      expect(registered.status, JSON.stringify(registered.json)).toBe(201)
      expect(registered.json).toMatchObject({ proving_system: "plonk", n_public: foreign.plonk.signals.length, name: "plonk demo" })
      expect(registered.json.id).toMatch(/^vk_/)
      const byId = yield* verify({ proving_system: "plonk", verification_key_id: registered.json.id, proof: foreign.plonk.proof, public_signals: foreign.plonk.signals })
      expect(byId.json).toMatchObject({ valid: true, verification_key_id: registered.json.id })
      yield* refused({ proving_system: "fflonk", verification_key_id: registered.json.id, proof: foreign.fflonk.proof, public_signals: foreign.fflonk.signals }, "proving_system")
      const badKey = yield* call("POST", "/api/v1/verification-keys", { proving_system: "groth16", verification_key: { ...foreign.groth16.key, vk_alpha_1: ["1", "3", "1"] } })
      expect(badKey.status).toBe(400)
      expect(badKey.json.error.details[0].path).toBe("verification_key.vk_alpha_1")
      expect((yield* call("GET", "/api/v1/verification-keys")).json).toMatchObject({ total: 1, has_more: false })
      expect((yield* call("GET", `/api/v1/verification-keys/${registered.json.id}`)).json.id).toBe(registered.json.id)
      expect((yield* call("DELETE", `/api/v1/verification-keys/${registered.json.id}`)).status).toBe(204)
      expect((yield* call("GET", `/api/v1/verification-keys/${registered.json.id}`)).json.error.code).toBe("verification_key_not_found")
      yield* refused({ proving_system: "plonk", verification_key_id: registered.json.id, proof: foreign.plonk.proof, public_signals: foreign.plonk.signals }, "verification_key_id")
      const audit = yield* call("GET", "/api/v1/audit-log")
      expect(audit.json.entries.map((e: { action: string }) => e.action)).toEqual(expect.arrayContaining(["verification_key.created", "verification_key.deleted"]))

      // A circuit's key: the built-in multiplier verifies the foreign Groth16 proof made with its files.
      const byCircuit = yield* verify({ proving_system: "groth16", circuit: "multiplier", proof: foreign.groth16.proof, public_signals: foreign.groth16.signals })
      expect(byCircuit.json).toMatchObject({ valid: true, circuit: "multiplier", proof_id: null })
      yield* refused({ proving_system: "groth16", circuit: "no-such", proof: foreign.groth16.proof, public_signals: foreign.groth16.signals }, "circuit")
      // A version named as a proof's type names it: built-in circuits have version 1 only.
      const byVersion = yield* verify({ proving_system: "groth16", circuit: "multiplier@1", proof: foreign.groth16.proof, public_signals: foreign.groth16.signals })
      expect(byVersion.json).toMatchObject({ valid: true, circuit: "multiplier" })
      yield* refused({ proving_system: "groth16", circuit: "multiplier@2", proof: foreign.groth16.proof, public_signals: foreign.groth16.signals }, "circuit")

      // Foreign proofs recorded nothing; the account's own proof, sent back, is named and recorded.
      expect((yield* call("GET", "/api/v1/events?type=proof.verified")).json.total).toBe(0)
      const made = yield* call("POST", "/api/v1/proofs", { type: "multiplier", inputs: { a: 5, b: 7 } })
      expect(made.status).toBe(202)
      let proof = made.json
      for (let i = 0; i < 600 && proof.status !== "completed" && proof.status !== "failed"; i++) {
        yield* Effect.sleep("100 millis")
        proof = (yield* call("GET", `/api/v1/proofs/${made.json.proof_id}`)).json
      }
      expect(proof.status).toBe("completed")
      const own = JSON.parse(Buffer.from(proof.proof_blob, "base64").toString("utf8"))
      const ownReply = yield* verify({ proving_system: "groth16", circuit: "multiplier", proof: own, public_signals: [proof.public_inputs.c] })
      expect(ownReply.json).toMatchObject({ valid: true, proof_id: made.json.proof_id })
      const events = (yield* call("GET", "/api/v1/events?type=proof.verified")).json
      expect(events.total).toBe(1)
      expect(events.events[0].data).toMatchObject({ proof_id: made.json.proof_id, circuit: "multiplier", valid: true })

      // Without `proofs:verify`: 403 on both endpoints.
      const narrow = yield* call("POST", "/api/v1/keys", { name: "narrow", scopes: ["proofs:read", "proofs:write"] })
      const narrowClient = makeHttpClient(baseUrl, { token: narrow.json.key })
      const denied = yield* Effect.promise(() => narrowClient.send("POST", "/api/v1/verifications", { body: request("groth16") }))
      expect(denied.status).toBe(403)
      expect(denied.json.error.code).toBe("insufficient_scope")
      expect((yield* Effect.promise(() => narrowClient.send("GET", "/api/v1/verification-keys"))).status).toBe(403)
    }), 600_000)
})
