// A circuit of 2^16 constraints (the benchmarks' smallest size: 273 chained Poseidon(2),
// 65,520 constraints) through the HTTP API over a real port: compiled by the repository's circom2,
// keyed by the native development setup, uploaded prebuilt (wasm + zkey + sym + sample inputs),
// checked to `ready`, proved by a worker, and the proof verified by snarkjs against the
// verification key the API returns. Skipped where the native addon is not built (its setup makes
// the key), except where CI=true.
import { makeHttpClient } from "@mzk/testkit"
import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import { execFileSync } from "node:child_process"
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe } from "vitest"
import { nativeSetup, prepareBenchArtifacts } from "../../../proving/bench/circuits/artifacts.js"
import { benchCircuit } from "../../../proving/bench/circuits/sources.js"
import { serverWithAccount, settle, snarkjsCli, tempDir, uploadPrebuilt } from "./circuits.js"

const native = nativeSetup()
if (!native.ok && process.env["CI"] === "true") throw new Error(`CI=true but the native addon did not load: ${native.reason}`)
if (!native.ok) console.warn(`skipped: the native development setup keys this circuit, and the addon did not load (${native.reason})`)

const CIRCUIT = benchCircuit("poseidon", 16)

describe.skipIf(!native.ok)("a 2^16 circuit through the HTTP API", () => {
  it.scopedLive("a prebuilt upload of 65,520 constraints is ready, proves, and its proof verifies with snarkjs", () =>
    Effect.gen(function*() {
      // The benchmarks' cache (named by the circuit and checked against its source): its compile,
      // witness and development key are a minute of CPU, made on a machine's first run only.
      const a = yield* Effect.promise(() => prepareBenchArtifacts(CIRCUIT, { threads: 2 }))
      expect(a.constraints).toBe(273 * 240)
      const read = (path: string) => new Uint8Array(readFileSync(path))
      // Sample inputs make the build check that this wasm, this zkey and this sym are one circuit.
      const sample = CIRCUIT.sampleInputs(() => BigInt(`0x${randomBytes(31).toString("hex")}`))

      // A circuit's first proof on a thread includes loading its key (its tables: about 14 s of
      // CPU at 2^16), which the default 60 s proof timeout does not cover on a loaded 2-core machine.
      const { baseUrl, keyOf } = yield* serverWithAccount({ workers: true, proofTimeoutMs: 600_000 })
      const { token } = yield* keyOf("Large")
      const api = makeHttpClient(baseUrl, { token })
      const upload = yield* Effect.promise(() =>
        uploadPrebuilt(baseUrl, token, "chain16", { wasm: read(a.wasm), zkey: read(a.zkey), sym: read(a.sym), sample_inputs: JSON.stringify(sample) })
      )
      expect(upload.status).toBe(202)
      const ready = yield* Effect.promise(() => settle(api, "/api/v1/circuits/chain16", (c) => c.status !== "compiling", 600_000))
      expect(ready).toMatchObject({ status: "ready", constraints: 65_520, public_signals: ["out"], development_only: false })

      const inputs = CIRCUIT.sampleInputs(() => BigInt(`0x${randomBytes(31).toString("hex")}`))
      const created = yield* Effect.promise(() => api.send("POST", "/api/v1/proofs", { body: { type: "chain16", inputs } }))
      expect(created.status).toBe(202)
      const done = yield* Effect.promise(() =>
        settle(api, `/api/v1/proofs/${created.json.proof_id}`, (p) => p.status === "completed" || p.status === "failed", 600_000)
      )
      expect(done.status).toBe("completed")
      // snarkjs's command line, in another process, with the verification key the API published.
      const out = done.public_inputs.out as string
      const dir = yield* tempDir("verify")
      writeFileSync(join(dir, "vk.json"), JSON.stringify(ready.verification_key))
      writeFileSync(join(dir, "proof.json"), Buffer.from(done.proof_blob, "base64").toString("utf8"))
      const verify = (signals: ReadonlyArray<string>) => {
        writeFileSync(join(dir, "public.json"), JSON.stringify(signals))
        return execFileSync(snarkjsCli, ["groth16", "verify", "vk.json", "public.json", "proof.json"], { cwd: dir, encoding: "utf8" })
      }
      expect(verify([out])).toContain("OK")
      expect(() => verify([(BigInt(out) + 1n).toString()])).toThrow()
      // The key the API publishes is the uploaded zkey's.
      expect(ready.verification_key).toMatchObject(JSON.parse(readFileSync(a.vkey, "utf8")))
    }), 1_500_000)
})
