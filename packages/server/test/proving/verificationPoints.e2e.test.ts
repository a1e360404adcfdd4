// Points at infinity over a real port, on SQLite and Postgres. snarkjs writes a commitment at
// infinity as ["0", "1", "0"]: the PLONK key of any circuit without constant terms has its Qc there.
// Such keys verify inline, registered (POST /verification-keys) and as the account's own PLONK
// circuit's key (a circom upload set up by the server, proved by it); Groth16 keys with IC points at
// infinity and proofs with π_A at infinity verify as the equation says (natively, as snarkjs does).
// Where no setup puts a point at infinity (Groth16's α₁ β₂ γ₂ δ₂, PLONK's X_2) it is a 400 naming the
// field, and so is the affine (0, 0), which is on neither curve, wherever it is sent.
import { makeHttpClient } from "@mzk/testkit"
import { expect, it } from "@effect/vitest"
import { Effect, type Scope } from "effect"
import { beforeAll, describe } from "vitest"
import { MUL_SOURCE } from "../../../proving/test/fixtures/mulSource.js"
import { groth16Instance } from "../../../prover-native/test/groth16Fixture.js"
import type { DatabaseTarget } from "../../src/database.js"
import { describePostgres, STORES } from "../bothStores.js"
import { serverWithAccount, settle } from "../circuits/circuits.js"
import { type Foreign, makeForeignProofs } from "./verifications.fixtures.js"

const R = 21888242871839275222246405745257275088548364400416034343698204186575808495617n
const INFINITY_G1 = ["0", "1", "0"]
const INFINITY_G2 = [["0", "0"], ["1", "0"], ["0", "0"]]
const ZERO_G1 = ["0", "0", "1"]
const ZERO_G2 = [["0", "0"], ["0", "0"], ["1", "0"]]

let foreign: Record<"groth16" | "plonk" | "fflonk", Foreign>
beforeAll(async () => {
  foreign = await makeForeignProofs({ constants: false })
}, 300_000)

const changed = (signals: ReadonlyArray<string>) => [...signals.slice(0, -1), ((BigInt(signals.at(-1)!) + 1n) % R).toString()]

const walk = (database: Effect.Effect<DatabaseTarget, unknown, Scope.Scope>) =>
  Effect.gen(function*() {
    const { baseUrl, keyOf } = yield* serverWithAccount({ workers: true, database: yield* database })
    const { token } = yield* keyOf("Points")
    const api = makeHttpClient(baseUrl, { token, timeoutMs: 120_000 })
    const call = (method: string, path: string, body?: unknown) => Effect.promise(() => api.send(method, path, { body }))
    const verify = (body: Record<string, unknown>) => call("POST", "/api/v1/verifications", body)
    const valid = (body: Record<string, unknown>) =>
      Effect.map(verify(body), (reply) => {
        expect(reply.status, JSON.stringify(reply.json)).toBe(200)
        return reply.json.valid as boolean
      })
    const refused = (reply: { status: number; json: any }) => {
      expect(reply.status, JSON.stringify(reply.json)).toBe(400)
      expect(reply.json.error.code).toBe("invalid_request")
      return (reply.json.error.details as Array<{ path: string; message: string }>).map((d) => [d.path, d.message])
    }

    // snarkjs's PLONK and FFLONK keys of a circuit without constants: inline, then registered.
    expect(foreign.plonk.key["Qc"]).toEqual(INFINITY_G1)
    for (const system of ["plonk", "fflonk"] as const) {
      const { key, proof, signals } = foreign[system]
      const inline = { proving_system: system, verification_key: key, proof }
      expect(yield* valid({ ...inline, public_signals: signals })).toBe(true)
      expect(yield* valid({ ...inline, public_signals: changed(signals) })).toBe(false)
      const registered = yield* call("POST", "/api/v1/verification-keys", { proving_system: system, verification_key: key })
      expect(registered.status, JSON.stringify(registered.json)).toBe(201)
      expect(registered.json).toMatchObject({ n_public: 2, verification_key: key })
      const byId = { proving_system: system, verification_key_id: registered.json.id, proof }
      expect(yield* valid({ ...byId, public_signals: signals })).toBe(true)
      expect(yield* valid({ ...byId, public_signals: changed(signals) })).toBe(false)
      const badX2 = { proving_system: system, verification_key: { ...key, X_2: INFINITY_G2 } }
      expect(refused(yield* call("POST", "/api/v1/verification-keys", badX2))).toEqual([["verification_key.X_2", expect.stringMatching(/^is the point at infinity/)]])
    }
    const plonkZero = { ...foreign.plonk.proof, A: ZERO_G1 }
    expect(refused(yield* verify({ proving_system: "plonk", verification_key: foreign.plonk.key, proof: plonkZero, public_signals: foreign.plonk.signals })))
      .toEqual([["proof.A", expect.stringMatching(/^is not on the curve/)]])

    // Groth16: IC₀ and IC₂ at infinity (a signal no constraint binds), π_A at infinity.
    const g = groth16Instance([3n, 5n, 7n, 11n, 0n, 13n, 17n], [42n, 43n], { ic: [0n, 9n, 0n] })
    const groth16 = { proving_system: "groth16", verification_key: g.vkey, proof: g.proof }
    expect(yield* valid({ ...groth16, public_signals: g.publicSignals })).toBe(true)
    expect(yield* valid({ ...groth16, public_signals: ["41", "43"] })).toBe(false)
    const registered = yield* call("POST", "/api/v1/verification-keys", { proving_system: "groth16", verification_key: g.vkey })
    expect(registered.status, JSON.stringify(registered.json)).toBe(201)
    expect(yield* valid({ proving_system: "groth16", verification_key_id: registered.json.id, proof: g.proof, public_signals: g.publicSignals })).toBe(true)
    // The affine (0, 0) is no point: a 400 naming the field, not `valid: false`.
    const real = foreign.groth16
    const realBody = { proving_system: "groth16", verification_key: real.key, public_signals: real.signals }
    expect(yield* valid({ ...realBody, proof: real.proof })).toBe(true)
    expect(refused(yield* verify({ ...realBody, proof: { ...real.proof, pi_a: ZERO_G1 } }))).toEqual([["proof.pi_a", expect.stringMatching(/^is not on the curve/)]])
    expect(refused(yield* verify({ ...realBody, proof: { ...real.proof, pi_b: ZERO_G2 } }))).toEqual([["proof.pi_b", expect.stringMatching(/^is not on the curve/)]])
    expect(refused(yield* verify({ ...realBody, proof: { ...real.proof, pi_a: ["0", "0"] } }))).toEqual([["proof.pi_a", "must be an array of 3"]])
    // Where no setup puts a point at infinity: refused, inline and registered alike.
    const degenerate = { ...real.key, vk_alpha_1: INFINITY_G1 }
    const atInfinity = [["verification_key.vk_alpha_1", expect.stringMatching(/^is the point at infinity/)]]
    expect(refused(yield* verify({ ...realBody, verification_key: degenerate, proof: real.proof }))).toEqual(atInfinity)
    expect(refused(yield* call("POST", "/api/v1/verification-keys", { proving_system: "groth16", verification_key: degenerate }))).toEqual(atInfinity)

    // The account's own PLONK circuit (c <== a * b: no constants), set up and proved by the server.
    const form = new FormData()
    form.append("name", "mul_plonk")
    form.append("proving_system", "plonk")
    form.append("main", new Blob([MUL_SOURCE]), "main.circom")
    const uploaded = yield* Effect.promise(() =>
      fetch(`${baseUrl}/api/v1/circuits`, { method: "POST", body: form, headers: { authorization: `Bearer ${token}` } }))
    expect(uploaded.status).toBe(202)
    const circuit = yield* Effect.promise(() => settle(api, "/api/v1/circuits/mul_plonk", (c) => c.status !== "compiling", 180_000))
    expect(circuit).toMatchObject({ status: "ready", proving_system: "plonk" })
    expect(circuit.verification_key.Qc).toEqual(INFINITY_G1)
    const requested = yield* call("POST", "/api/v1/proofs", { type: "mul_plonk", inputs: { a: 3, b: 11 } })
    const made = yield* Effect.promise(() =>
      settle(api, `/api/v1/proofs/${requested.json.proof_id}`, (p) => p.status === "completed" || p.status === "failed", 180_000))
    expect(made.status).toBe("completed")
    const blob = JSON.parse(Buffer.from(made.proof_blob, "base64").toString("utf8"))
    const byCircuit = yield* verify({ proving_system: "plonk", circuit: "mul_plonk", proof: blob, public_signals: ["33"] })
    expect(byCircuit.status, JSON.stringify(byCircuit.json)).toBe(200)
    expect(byCircuit.json).toMatchObject({ valid: true, circuit: "mul_plonk", proof_id: made.proof_id })
    expect(yield* valid({ proving_system: "plonk", circuit: "mul_plonk", proof: blob, public_signals: ["34"] })).toBe(false)
  })

describe("points at infinity and (0, 0) in verification keys and proofs, over a real port", () => {
  it.scopedLive("SQLite", () => walk(STORES[0]![1]), 600_000)
  describePostgres("Postgres", () => {
    it.scopedLive("Postgres", () => walk(STORES[1]![1]), 600_000)
  })
})
