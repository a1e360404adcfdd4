import { UltraHonkBackend } from "@aztec/bb.js"
import { createEVM } from "@ethereumjs/evm"
import { bytesToHex, hexToBytes } from "@ethereumjs/util"
import { compileNoir, noirWitness, writeDevelopmentCrs } from "@mzk/proving"
import { Accounts, ApiKeys } from "@mzk/core"
import { makeHttpClient } from "@mzk/testkit"
import { expect, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { join } from "node:path"
import solc from "solc"
import { describe } from "vitest"
import { settle, tempDir } from "./circuits.js"
import { startServer } from "../realServer.js"

// A Noir program through the HTTP API on a real port: uploaded as Nargo.toml + src/main.nr, built
// by noir_wasm in the build child, proven with UltraHonk (bb.js) by the worker, verified through
// the API, by bb.js's own UltraHonkBackend (from the bytecode this test compiled, not the server's
// key) and by the server's verifier.sol compiled with solc and run in @ethereumjs/evm.
const MANIFEST = `[package]\nname = "sum"\ntype = "bin"\nauthors = [""]\n\n[dependencies]\n`
const MAIN = "fn main(x: Field, y: pub Field) -> pub Field {\n    assert(x != y);\n    x + y\n}\n"
const word = (n: bigint) => "0x" + n.toString(16).padStart(64, "0")

const upload = async (
  baseUrl: string,
  token: string,
  name: string,
  files: Readonly<Record<string, string>>,
  extra: Record<string, string> = {},
  text: Record<string, string> = {}
) => {
  const form = new FormData()
  form.append("name", name)
  for (const [field, value] of Object.entries(text)) form.append(field, value)
  for (const [path, text] of Object.entries(files)) form.append("noir_sources", new Blob([text], { type: "text/plain" }), path)
  for (const [part, text] of Object.entries(extra)) form.append(part, new Blob([text]), `${part}.txt`)
  const response = await fetch(`${baseUrl}/api/v1/circuits`, { method: "POST", body: form, headers: { authorization: `Bearer ${token}` } })
  return { status: response.status, json: await response.json() as Record<string, any> }
}

describe("a Noir program over a real port", () => {
  it.scopedLive("upload → ready → UltraHonk proof → verified by the API, bb.js and its Solidity verifier; a compile error has its file and line", () =>
    Effect.gen(function*() {
      const crsDir = join(yield* tempDir("crs"), "crs")
      // 2^12 + 1 points: the program pads to 2^12 gates. A test CRS from a fresh τ.
      const [, compiled] = yield* Effect.all([
        Effect.promise(() => writeDevelopmentCrs(crsDir, 2 ** 12 + 1)),
        Effect.promise(() => compileNoir({ "Nargo.toml": MANIFEST, "src/main.nr": MAIN }))
      ], { concurrency: 2 })
      if (!compiled.ok) throw new Error(compiled.message)
      const cacheDir = yield* tempDir("cache")
      const server = yield* startServer({ workers: true, proverThreads: 1, circuits: { noirCrs: crsDir, cacheDir } })
      const { token } = yield* Effect.gen(function*() {
        const account = yield* Effect.flatMap(Accounts, (a) => a.create({ name: "Noir" }))
        const key = yield* Effect.flatMap(ApiKeys, (k) => k.create(account.id, { name: "tests" }))
        return { token: Redacted.value(key.secret) }
      }).pipe(Effect.provide(server.context))
      const api = makeHttpClient(server.baseUrl, { token })

      // A Noir upload mixed with circom parts is refused, naming the part.
      const mixed = yield* Effect.promise(() => upload(server.baseUrl, token, "mixed", { "Nargo.toml": MANIFEST, "src/main.nr": MAIN }, { main: "x" }))
      expect([mixed.status, mixed.json.error.code, mixed.json.error.details]).toEqual([400, "invalid_request", [{ path: "main", message: expect.any(String) }]])

      // A Noir program is proven with UltraHonk and nothing else.
      const plonk = yield* Effect.promise(() =>
        upload(server.baseUrl, token, "plonk", { "Nargo.toml": MANIFEST, "src/main.nr": MAIN }, {}, { proving_system: "plonk" }))
      expect([plonk.status, plonk.json.error.details[0].path]).toEqual([400, "proving_system"])

      const sent = yield* Effect.promise(() =>
        upload(server.baseUrl, token, "sum", { "Nargo.toml": MANIFEST, "src/main.nr": MAIN }, {}, { metadata: JSON.stringify({ project: "noir" }) }))
      expect(sent.status).toBe(202)
      expect(sent.json).toMatchObject({ name: "sum", status: "compiling", proving_system: "ultra_honk", proving_systems: ["ultra_honk"] })
      // Its metadata is kept, as any upload's (a Noir upload's was dropped).
      expect(sent.json.metadata).toEqual({ project: "noir" })
      const broken = yield* Effect.promise(() =>
        upload(server.baseUrl, token, "broken", {
          "Nargo.toml": MANIFEST,
          "src/main.nr": "mod util;\nfn main(x: Field) {\n    assert(util::double(x) == 4);\n}\n",
          "src/util.nr": "pub fn double(x: Field) -> Field {\n    let y: bool = x;\n    y * 2\n}\n"
        }))
      expect(broken.status).toBe(202)

      const ready = yield* Effect.promise(() => settle(api, "/api/v1/circuits/sum", (c) => c.status !== "compiling", 240_000))
      expect(ready).toMatchObject({
        status: "ready",
        proving_system: "ultra_honk",
        inputs: [
          { name: "x", visibility: "private", kind: "field", dimensions: [] },
          { name: "y", visibility: "public", kind: "field", dimensions: [] }
        ],
        public_signals: ["y", "return"],
        verification_key: { protocol: "ultra_honk", curve: "bn128", vk: expect.stringMatching(/^0x[0-9a-f]+$/) }
      })
      expect(ready.constraints).toBeGreaterThan(0)
      const failed = yield* Effect.promise(() => settle(api, "/api/v1/circuits/broken", (c) => c.status !== "compiling", 240_000))
      expect(failed).toMatchObject({ status: "failed", error: { code: "compile_error", file: "src/util.nr", line: 2 } })

      const created = yield* Effect.promise(() => api.send("POST", "/api/v1/proofs", { body: { type: "sum", inputs: { x: 3, y: "4" } } }))
      expect(created.status).toBe(202)
      const proof = yield* Effect.promise(() =>
        settle(api, `/api/v1/proofs/${created.json.proof_id}`, (p) => p.status === "completed" || p.status === "failed", 240_000))
      expect(proof).toMatchObject({ status: "completed", proving_system: "ultra_honk", public_inputs: { y: "4", return: "7" } })
      const blob = JSON.parse(Buffer.from(proof.proof_blob, "base64").toString("utf8")) as { protocol: string; proof: string }
      expect(blob.protocol).toBe("ultra_honk")
      const proofBytes = hexToBytes(blob.proof as `0x${string}`)
      console.log(`UltraHonk proof over the API: ${proofBytes.length} bytes`)

      const verified = yield* Effect.promise(() => api.send("GET", `/api/v1/proofs/${proof.proof_id}/verify`))
      expect(verified.json).toMatchObject({ valid: true, circuit: "sum" })

      // Inputs the program rejects fail the proof with invalid_inputs, not a crash.
      const refused = yield* Effect.promise(() => api.send("POST", "/api/v1/proofs", { body: { type: "sum", inputs: { x: 4, y: 4 } } }))
      const refusedProof = yield* Effect.promise(() =>
        settle(api, `/api/v1/proofs/${refused.json.proof_id}`, (p) => p.status === "completed" || p.status === "failed", 240_000))
      expect(refusedProof).toMatchObject({ status: "failed", error: { code: "invalid_inputs" } })

      // bb.js's own verifier, from the program this test compiled and the CRS files.
      const bbVerifies = (publicInputs: Array<string>) =>
        Effect.promise(async () => {
          const backend = new UltraHonkBackend(compiled.program.bytecode, { threads: 1, crsPath: crsDir })
          try {
            return await backend.verifyProof({ proof: proofBytes, publicInputs }, { keccak: true })
          } finally {
            await backend.destroy()
          }
        })
      expect(yield* bbVerifies([word(4n), word(7n)])).toBe(true)
      expect(yield* bbVerifies([word(4n), word(8n)])).toBe(false)

      // POST /verifications: a proof mzk did not make (bb.js's UltraHonkBackend, keccak transcript,
      // run by this test) against the circuit's published key; tampered and malformed inputs.
      const foreign = yield* Effect.promise(async () => {
        const backend = new UltraHonkBackend(compiled.program.bytecode, { threads: 1, crsPath: crsDir })
        try {
          return await backend.generateProof(await noirWitness(compiled.program, { x: "6", y: "5" }), { keccak: true })
        } finally {
          await backend.destroy()
        }
      })
      const foreignBody = (signals: Array<string>, key: unknown = ready.verification_key) => ({
        proving_system: "ultra_honk",
        verification_key: key,
        proof: { protocol: "ultra_honk", proof: bytesToHex(foreign.proof) },
        public_signals: signals
      })
      const verifyForeign = (body: unknown) => Effect.promise(() => api.send("POST", "/api/v1/verifications", { body }))
      const good = yield* verifyForeign(foreignBody(["5", "11"]))
      expect([good.status, good.json.valid], JSON.stringify(good.json)).toEqual([200, true])
      expect((yield* verifyForeign(foreignBody(["5", "12"]))).json.valid).toBe(false)
      // A commitment moved off the curve: 400 naming the key, before bb.js reads it.
      const vk = ready.verification_key.vk as string
      const offCurve = yield* verifyForeign(foreignBody(["5", "11"], { ...ready.verification_key, vk: vk.slice(0, 2 + 64 * 2 - 2) + "07" + vk.slice(2 + 64 * 2) }))
      expect([offCurve.status, offCurve.json.error.details?.[0]?.path]).toEqual([400, "verification_key.vk"])
      const shortProof = yield* verifyForeign({ ...foreignBody(["5", "11"]), proof: { protocol: "ultra_honk", proof: "0x1234" } })
      expect([shortProof.status, shortProof.json.error.details?.[0]?.path]).toEqual([400, "proof.proof"])

      const calldata = yield* Effect.promise(() => api.send("GET", `/api/v1/proofs/${proof.proof_id}/calldata`))
      expect(calldata.status).toBe(200)
      expect(calldata.json.function).toBe("verify(bytes,bytes32[])")
      expect(calldata.json.arguments).toEqual([blob.proof, [word(4n), word(7n)]])

      const verifier = yield* Effect.promise(() => api.send("GET", "/api/v1/circuits/sum/verifier.sol"))
      expect(verifier.status).toBe(200)
      const output = JSON.parse(solc.compile(JSON.stringify({
        language: "Solidity",
        sources: { "Verifier.sol": { content: verifier.text } },
        settings: { evmVersion: "cancun", optimizer: { enabled: true, runs: 1 }, outputSelection: { "*": { "*": ["evm.bytecode.object"] } } }
      }))) as {
        errors?: Array<{ severity: string; formattedMessage: string }>
        contracts: Record<string, Record<string, { evm: { bytecode: { object: string } } }>>
      }
      expect((output.errors ?? []).filter((e) => e.severity === "error").map((e) => e.formattedMessage)).toEqual([])
      // The verifier is over EIP-170's 24 KiB: a chain deploys it with its libraries linked apart.
      const evm = yield* Effect.promise(() => createEVM({ allowUnlimitedContractSize: true }))
      const deployed = yield* Effect.promise(() =>
        evm.runCall({ data: hexToBytes(`0x${output.contracts["Verifier.sol"]!["HonkVerifier"]!.evm.bytecode.object}`), gasLimit: 30_000_000n }))
      expect(deployed.execResult.exceptionError).toBeUndefined()
      const call = (data: string) =>
        Effect.promise(async () => {
          const result = await evm.runCall({ to: deployed.createdAddress!, data: hexToBytes(data as `0x${string}`), gasLimit: 30_000_000n })
          return {
            valid: result.execResult.exceptionError === undefined && bytesToHex(result.execResult.returnValue) === word(1n),
            gas: result.execResult.executionGasUsed
          }
        })
      const accepted = yield* call(calldata.json.calldata)
      expect(accepted.valid).toBe(true)
      console.log(`HonkVerifier.verify gas, the API's calldata: ${accepted.gas}`)
      // The last word is the public return value: 7 → 8.
      const tampered = (calldata.json.calldata as string).slice(0, -64) + word(8n).slice(2)
      expect((yield* call(tampered)).valid).toBe(false)
    }), 600_000)
})
