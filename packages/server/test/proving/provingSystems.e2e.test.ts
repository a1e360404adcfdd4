import { makeHttpClient } from "@mzk/testkit"
import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe } from "vitest"
import { callContract, compileContract, deployContract } from "../../../proving/test/fixtures/evm.js"
import { MUL_SOURCE } from "../../../proving/test/fixtures/mulSource.js"
import { compileCircom, serverWithAccount, settle, snarkjsCli, uploadPrebuilt } from "../circuits/circuits.js"

// PLONK and FFLONK through the HTTP API over a real port: circom sources uploaded with
// `proving_system` are set up from the development ptau alone, proven in the prover pool, verified
// by the API and by the snarkjs command line; the built-in multiplier is proven with each system;
// every mismatch is a 400 naming the field; each circuit's verifier.sol, compiled by solc and run in
// @ethereumjs/evm, accepts the API's calldata and refuses a tampered public signal.
const MUL = MUL_SOURCE

const upload = async (baseUrl: string, token: string, name: string, proving_system?: string) => {
  const form = new FormData()
  form.append("name", name)
  if (proving_system !== undefined) form.append("proving_system", proving_system)
  form.append("main", new Blob([MUL]), "main.circom")
  const response = await fetch(`${baseUrl}/api/v1/circuits`, { method: "POST", body: form, headers: { authorization: `Bearer ${token}` } })
  return { status: response.status, json: await response.json() as Record<string, any> }
}

const finished = (c: { status: string }) => c.status !== "compiling"
const settled = (p: { status: string }) => p.status === "completed" || p.status === "failed"

/** The snarkjs command line's verdict on a proof, in another process. */
const cliVerifies = (system: string, vkey: unknown, proof: unknown, signals: ReadonlyArray<string>) => {
  const dir = mkdtempSync(join(tmpdir(), "mzk-systems-cli-"))
  writeFileSync(join(dir, "vk.json"), JSON.stringify(vkey))
  writeFileSync(join(dir, "proof.json"), JSON.stringify(proof))
  writeFileSync(join(dir, "public.json"), JSON.stringify(signals))
  try {
    return /OK!|PROOF VERIFIED SUCCESSFULLY/.test(execFileSync(snarkjsCli, [system, "verify", "vk.json", "public.json", "proof.json"], { cwd: dir, encoding: "utf8", stdio: "pipe" }))
  } catch {
    return false
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const blobOf = (proof: { proof_blob: string }) => JSON.parse(Buffer.from(proof.proof_blob, "base64").toString("utf8"))

describe("proof systems over a real port", () => {
  it.scopedLive("circuits uploaded for groth16, plonk and fflonk build, prove, verify (API and snarkjs CLI) and give calldata; mismatches are 400", () =>
    Effect.gen(function*() {
      const { baseUrl, keyOf } = yield* serverWithAccount({ workers: true })
      const { token } = yield* keyOf("Systems")
      const api = makeHttpClient(baseUrl, { token })
      for (const system of ["groth16", "plonk", "fflonk"] as const) {
        const name = `mul_${system}`
        const created = yield* Effect.promise(() => upload(baseUrl, token, name, system))
        expect(created.status).toBe(202)
        expect(created.json).toMatchObject({ proving_system: system, proving_systems: [system] })
        const circuit = yield* Effect.promise(() => settle(api, `/api/v1/circuits/${name}`, finished, 120_000))
        expect(circuit).toMatchObject({ status: "ready", proving_system: system })
        expect(circuit.verification_key.protocol).toBe(system)

        const requested = yield* Effect.promise(() => api.send("POST", "/api/v1/proofs", { body: { type: name, inputs: { a: 3, b: 11 } } }))
        expect(requested.status).toBe(202)
        expect(requested.json.proving_system).toBe(system)
        const proof = yield* Effect.promise(() => settle(api, `/api/v1/proofs/${requested.json.proof_id}`, settled, 120_000))
        expect(proof).toMatchObject({ status: "completed", proving_system: system, public_inputs: { c: "33" } })
        expect(blobOf(proof).protocol).toBe(system)
        expect(cliVerifies(system, circuit.verification_key, blobOf(proof), ["33"])).toBe(true)
        expect(cliVerifies(system, circuit.verification_key, blobOf(proof), ["34"])).toBe(false)
        const verified = yield* Effect.promise(() => api.send("GET", `/api/v1/proofs/${proof.proof_id}/verify`))
        expect(verified.json).toMatchObject({ valid: true, proving_system: system })
        const calldata = yield* Effect.promise(() => api.send("GET", `/api/v1/proofs/${proof.proof_id}/calldata`))
        expect(calldata.status).toBe(200)
        expect(calldata.json.function).toBe(
          system === "groth16"
            ? "verifyProof(uint256[2],uint256[2][2],uint256[2],uint256[1])"
            : system === "plonk" ? "verifyProof(uint256[24],uint256[1])" : "verifyProof(bytes32[24],uint256[1])"
        )
        const sol = yield* Effect.promise(() => api.send("GET", `/api/v1/circuits/${name}/verifier.sol`))
        expect(sol.status).toBe(200)
        expect(sol.text).toMatch(/function verifyProof/)
        // On a chain: the API's verifier.sol, compiled by solc, accepts the API's calldata and refuses
        // it with the public signal changed (33 → 34, the calldata's last word).
        const contract = /contract (\w+)/.exec(sol.text)![1]!
        const chain = yield* Effect.promise(() => deployContract(compileContract(sol.text, contract).bytecode))
        const data: string = calldata.json.calldata
        const accepted = yield* Effect.promise(() => callContract(chain, data))
        expect([accepted.exceptionError, BigInt(accepted.returned)]).toEqual([undefined, 1n])
        const tampered = `${data.slice(0, -64)}${(34n).toString(16).padStart(64, "0")}`
        const refused = yield* Effect.promise(() => callContract(chain, tampered))
        expect(refused.exceptionError === undefined && BigInt(refused.returned) === 1n).toBe(false)
        console.log(`${contract}.verifyProof gas (${system}), the API's calldata: ${accepted.gas}`)

        // Another system of an uploaded circuit: 400 naming the field, nothing queued.
        const other = system === "plonk" ? "groth16" : "plonk"
        const mismatch = yield* Effect.promise(() => api.send("POST", "/api/v1/proofs", { body: { type: name, inputs: { a: 3, b: 11 }, proving_system: other } }))
        expect(mismatch.status).toBe(400)
        expect(mismatch.json.error.details).toEqual([expect.objectContaining({ path: "proving_system" })])
        const wrongSol = yield* Effect.promise(() => api.send("GET", `/api/v1/circuits/${name}/verifier.sol?proving_system=${other}`))
        expect(wrongSol.status).toBe(400)
      }

      // ultra_honk is for Noir programs: 400 on a circom upload, naming the field.
      const honk = yield* Effect.promise(() => upload(baseUrl, token, "mul_honk", "ultra_honk"))
      expect(honk.status).toBe(400)
      expect(honk.json.error.details).toEqual([expect.objectContaining({ path: "proving_system" })])
      const unknown = yield* Effect.promise(() => upload(baseUrl, token, "mul_x", "halo2"))
      expect(unknown.status).toBe(400)
    }), 600_000)

  it.scopedLive("prebuilt zkeys: a Groth16 zkey named plonk and a PLONK zkey named groth16 are 400s; a PLONK zkey is recognised", () =>
    Effect.gen(function*() {
      const { baseUrl, keyOf } = yield* serverWithAccount({ workers: true })
      const { token } = yield* keyOf("Prebuilt systems")
      const api = makeHttpClient(baseUrl, { token })
      // The built-in multiplier's keys, with the wasm and sym circom writes for its source.
      const { sym, wasm } = yield* compileCircom(fileURLToPath(new URL("../../../proving/circom/multiplier.circom", import.meta.url)))
      const key = (file: string) => new Uint8Array(readFileSync(fileURLToPath(new URL(`../../../proving/build/multiplier/${file}`, import.meta.url))))
      const send = (name: string, zkey: Uint8Array, proving_system?: string) =>
        Effect.promise(async () => {
          const form = new FormData()
          form.append("name", name)
          if (proving_system !== undefined) form.append("proving_system", proving_system)
          form.append("wasm", new Blob([wasm], { type: "application/wasm" }), "circuit.wasm")
          form.append("zkey", new Blob([zkey], { type: "application/octet-stream" }), "circuit.zkey")
          form.append("sym", new Blob([sym], { type: "text/plain" }), "circuit.sym")
          const response = await fetch(`${baseUrl}/api/v1/circuits`, { method: "POST", body: form, headers: { authorization: `Bearer ${token}` } })
          return { status: response.status, json: await response.json() as Record<string, any> }
        })
      // A Groth16 key's header section comes first: the upload is refused before anything is stored.
      const groth16AsPlonk = yield* send("mult_wrong", key("multiplier.zkey"), "plonk")
      expect(groth16AsPlonk.status).toBe(400)
      expect(groth16AsPlonk.json.error.details).toEqual([
        expect.objectContaining({ path: "proving_system", message: expect.stringMatching(/groth16, not plonk/) })
      ])
      // A PLONK key writes its header section last: found there as the upload streams in, refused the same.
      const plonkAsGroth16 = yield* send("plonk_as_groth16", key("multiplier.plonk.zkey"), "groth16")
      expect(plonkAsGroth16.status).toBe(400)
      expect(plonkAsGroth16.json.error.details).toEqual([
        expect.objectContaining({ path: "proving_system", message: expect.stringMatching(/plonk, not groth16/) })
      ])
      expect((yield* Effect.promise(() => api.send("GET", "/api/v1/circuits/plonk_as_groth16"))).status).toBe(404)
      const recognised = yield* Effect.promise(() =>
        uploadPrebuilt(baseUrl, token, "mult_plonk", { wasm, zkey: key("multiplier.plonk.zkey"), sym, sample_inputs: JSON.stringify({ a: 2, b: 5 }) }))
      expect(recognised.status).toBe(202)
      expect(yield* Effect.promise(() => settle(api, "/api/v1/circuits/mult_plonk", finished, 120_000))).toMatchObject({ status: "ready", proving_system: "plonk" })
      const requested = yield* Effect.promise(() => api.send("POST", "/api/v1/proofs", { body: { type: "mult_plonk", inputs: { a: 3, b: 11 } } }))
      const proof = yield* Effect.promise(() => settle(api, `/api/v1/proofs/${requested.json.proof_id}`, settled, 120_000))
      expect(proof).toMatchObject({ status: "completed", proving_system: "plonk", public_inputs: { c: "33" } })
    }), 300_000)

  it.scopedLive("the built-in multiplier is proven with each system its listing names; verified by the API and the snarkjs CLI", () =>
    Effect.gen(function*() {
      const { baseUrl, keyOf } = yield* serverWithAccount({ workers: true })
      const { token } = yield* keyOf("Builtin systems")
      const api = makeHttpClient(baseUrl, { token })
      const listed = (yield* Effect.promise(() => api.send("GET", "/api/v1/circuits"))).json.circuits as Array<Record<string, any>>
      const multiplier = listed.find((c) => c.name === "multiplier")!
      expect(multiplier).toMatchObject({ proving_system: "groth16", proving_systems: ["groth16", "plonk", "fflonk"] })
      for (const system of ["groth16", "plonk", "fflonk"]) {
        const requested = yield* Effect.promise(() =>
          api.send("POST", "/api/v1/proofs", { body: { type: "multiplier", inputs: { a: 3, b: 11 }, proving_system: system } }))
        expect(requested.status).toBe(202)
        const proof = yield* Effect.promise(() => settle(api, `/api/v1/proofs/${requested.json.proof_id}`, settled, 120_000))
        expect(proof).toMatchObject({ status: "completed", proving_system: system })
        const vkey = JSON.parse(readFileSync(fileURLToPath(new URL(
          `../../../proving/build/multiplier/verification_key${system === "groth16" ? "" : `.${system}`}.json`,
          import.meta.url
        )), "utf8"))
        expect(cliVerifies(system, vkey, blobOf(proof), ["33"])).toBe(true)
        expect((yield* Effect.promise(() => api.send("GET", `/api/v1/proofs/${proof.proof_id}/verify`))).json).toMatchObject({ valid: true })
        expect((yield* Effect.promise(() => api.send("GET", `/api/v1/circuits/multiplier/verifier.sol?proving_system=${system}`))).status).toBe(200)
      }
      // A built-in without keys for a system: 400 naming the field.
      const range = yield* Effect.promise(() =>
        api.send("POST", "/api/v1/proofs", { body: { type: "range", inputs: { value: 5, lower: 1, upper: 10 }, proving_system: "fflonk" } }))
      expect(range.status).toBe(400)
      expect(range.json.error.details).toEqual([expect.objectContaining({ path: "proving_system" })])
    }), 300_000)
})
