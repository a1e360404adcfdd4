// PLONK and FFLONK zkeys made by snarkjs's own `plonk setup` / `fflonk setup`, uploaded prebuilt with
// the wasm and sym circom wrote, over a real port, on SQLite and Postgres. The circuit's gate takes a
// sum, for which the setup adds a wire the zkey counts and the wasm does not compute: the upload is
// recognised as its zkey's system at once (202), made ready, proved and verified (also against the
// circuit's own key, whose Qc is at infinity). A zkey uploaded as another system than its own is a
// 400 naming proving_system before anything is stored, though snarkjs writes its header section last.
import { makeHttpClient } from "@mzk/testkit"
import { expect, it } from "@effect/vitest"
import { Effect, type Scope } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe } from "vitest"
import type { UniversalSystem } from "../../../proving/test/fixtures/universal.js"
import type { DatabaseTarget } from "../../src/database.js"
import { describePostgres, STORES } from "../bothStores.js"
import { serverWithAccount, settle } from "../circuits/circuits.js"
import { type SnarkjsPrebuilt, snarkjsPrebuilt } from "./prebuilt.fixtures.js"

let work: string
let compiled: SnarkjsPrebuilt
const zkeys = {} as Record<UniversalSystem, Uint8Array>
beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "mzk-prebuilt-systems-"))
  compiled = await snarkjsPrebuilt(work, ["plonk", "fflonk"])
  for (const system of ["plonk", "fflonk"] as const) zkeys[system] = compiled.zkeys[system]!
}, 300_000)
afterAll(() => rmSync(work, { recursive: true, force: true }))

const walk = (database: Effect.Effect<DatabaseTarget, unknown, Scope.Scope>) =>
  Effect.gen(function*() {
    const { baseUrl, keyOf } = yield* serverWithAccount({ workers: true, database: yield* database })
    const { token } = yield* keyOf("Prebuilt systems")
    const api = makeHttpClient(baseUrl, { token, timeoutMs: 120_000 })
    const call = (method: string, path: string, body?: unknown) => Effect.promise(() => api.send(method, path, { body }))
    const upload = (name: string, zkey: Uint8Array, extra: { proving_system?: string; r1cs?: boolean; sample_inputs?: string } = {}) =>
      Effect.promise(async () => {
        const form = new FormData()
        form.append("name", name)
        if (extra.proving_system !== undefined) form.append("proving_system", extra.proving_system)
        form.append("wasm", new Blob([compiled.wasm], { type: "application/wasm" }), "circuit.wasm")
        form.append("zkey", new Blob([zkey], { type: "application/octet-stream" }), "circuit.zkey")
        form.append("sym", new Blob([compiled.sym], { type: "text/plain" }), "circuit.sym")
        if (extra.r1cs === true) form.append("r1cs", new Blob([compiled.r1cs], { type: "application/octet-stream" }), "circuit.r1cs")
        if (extra.sample_inputs !== undefined) form.append("sample_inputs", new Blob([extra.sample_inputs], { type: "application/json" }), "input.json")
        const response = await fetch(`${baseUrl}/api/v1/circuits`, { method: "POST", body: form, headers: { authorization: `Bearer ${token}` } })
        return { status: response.status, json: await response.json() as Record<string, any> }
      })

    // Named as another system: refused at upload, naming the field; nothing stored.
    for (const [system, named] of [["plonk", "groth16"], ["fflonk", "plonk"], ["plonk", "fflonk"]] as const) {
      const refused = yield* upload(`wrong_${system}_${named}`, zkeys[system], { proving_system: named })
      expect(refused.status, JSON.stringify(refused.json)).toBe(400)
      expect(refused.json.error.details).toEqual([{
        path: "proving_system",
        message: `the zkey is set up for ${system}, not ${named}: send proving_system ${system}, or a zkey set up for ${named}`
      }])
      expect((yield* call("GET", `/api/v1/circuits/wrong_${system}_${named}`)).status).toBe(404)
    }

    // Recognised from the zkey at upload: PLONK with sample inputs, FFLONK with the r1cs (the
    // all-zero input proves); both ready, proved, verified.
    for (const [system, extra] of [["plonk", { sample_inputs: JSON.stringify({ a: 2, b: 5, d: 3 }) }], ["fflonk", { r1cs: true }]] as const) {
      const name = `sum_times_${system}`
      const created = yield* upload(name, zkeys[system], extra)
      expect(created.status, JSON.stringify(created.json)).toBe(202)
      expect(created.json).toMatchObject({ proving_system: system, status: "compiling" })
      const circuit = yield* Effect.promise(() => settle(api, `/api/v1/circuits/${name}`, (c) => c.status !== "compiling", 180_000))
      expect(circuit, JSON.stringify(circuit.error)).toMatchObject({ status: "ready", proving_system: system, public_signals: ["c"] })
      const requested = yield* call("POST", "/api/v1/proofs", { type: name, inputs: { a: 4, b: 7, d: 3 } })
      expect(requested.status).toBe(202)
      const proof = yield* Effect.promise(() =>
        settle(api, `/api/v1/proofs/${requested.json.proof_id}`, (p) => p.status === "completed" || p.status === "failed", 180_000))
      expect(proof).toMatchObject({ status: "completed", proving_system: system, public_inputs: { c: "33" } })
      expect((yield* call("GET", `/api/v1/proofs/${proof.proof_id}/verify`)).json).toMatchObject({ valid: true })
      const blob = JSON.parse(Buffer.from(proof.proof_blob, "base64").toString("utf8"))
      const byCircuit = yield* call("POST", "/api/v1/verifications", { proving_system: system, circuit: name, proof: blob, public_signals: ["33"] })
      expect(byCircuit.status, JSON.stringify(byCircuit.json)).toBe(200)
      expect(byCircuit.json).toMatchObject({ valid: true, proof_id: proof.proof_id })
    }
  })

describe("snarkjs's own PLONK and FFLONK zkeys uploaded prebuilt, over a real port", () => {
  it.scopedLive("SQLite", () => walk(STORES[0]![1]), 600_000)
  describePostgres("Postgres", () => {
    it.scopedLive("Postgres", () => walk(STORES[1]![1]), 600_000)
  })
})
