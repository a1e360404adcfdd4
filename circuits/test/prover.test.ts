import { afterAll, beforeAll, describe, expect, it, layer } from "@effect/vitest"
import {
  Accounts,
  DEFAULT_PROOFS_CONFIG,
  decodeProofBlob,
  EventsRepo,
  type Principal,
  Prover,
  ProofLoops,
  Proofs,
  ProofsConfig,
  SCOPES
} from "@mzk/core"
import { FAKE_CIRCUIT_SPECS, testCore } from "@mzk/testkit"
import { Duration, Effect, Either, Layer, Option, Schedule } from "effect"
import { spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import * as snarkjs from "snarkjs"
import { artifactsOf, CIRCUIT_SPECS, FIELD_MODULUS, validateInputs } from "../src/catalog.js"
import { Groth16ProverLive } from "../src/prover.js"
import { type Case, makeCases } from "./fixtures/inputs.js"

const vkeyOf = (circuit: string) => JSON.parse(readFileSync(artifactsOf(circuit).vkey, "utf8")) as unknown

let cases: Record<string, Case>
beforeAll(async () => {
  cases = await makeCases()
})
// snarkjs.groth16.verify in this thread starts the multi-threaded bn128 curve; stop it.
afterAll(async () => {
  await (globalThis as { curve_bn128?: { terminate(): Promise<void> } | null }).curve_bn128?.terminate()
})

describe("catalog", () => {
  it("matches the testkit's copy (minus verification keys) and the committed verification keys", () => {
    expect(CIRCUIT_SPECS.map((spec) => ({ ...spec, verification_key: null }))).toEqual(FAKE_CIRCUIT_SPECS)
    for (const spec of CIRCUIT_SPECS) {
      expect((spec.verification_key as { nPublic: number }).nPublic, spec.circuit).toBe(spec.public_signals.length)
    }
    expect(FIELD_MODULUS.toString()).toBe(CIRCUIT_SPECS[0]!.field_modulus)
  })

  it("validation names each bad input by path and refuses non-canonical values", () => {
    const merkle = {
      secret: "1",
      root: FIELD_MODULUS.toString(),
      path_elements: [...Array(3).fill("0"), "-1", ...Array(16).fill("0")],
      path_indices: Array(20).fill("1")
    }
    const result = validateInputs({ type: "merkle_membership", inputs: merkle })
    expect(Either.getLeft(result).pipe(Option.map((details) => details.map((d) => d.path)))).toEqual(
      Option.some(["inputs.path_elements.3", "inputs.root"])
    )
    expect(Either.isRight(validateInputs({ type: "multiplier", inputs: { a: "3", b: 11 } }))).toBe(true)
  })
})

layer(Groth16ProverLive({ poolSize: 2 }), { timeout: 60_000, excludeTestServices: true })("Groth16Prover", (it) => {
  for (const spec of CIRCUIT_SPECS) {
    it.effect(`${spec.circuit}: a proof from the pool verifies with snarkjs and the committed key; a flipped public signal does not`, () =>
      Effect.gen(function*() {
        const prover = yield* Prover
        const { inputs, publicSignals } = cases[spec.circuit]!
        const out = yield* prover.prove(spec.circuit, inputs)
        expect(out.public_signals).toEqual(publicSignals)
        const vkey = vkeyOf(spec.circuit)
        expect(yield* Effect.promise(() => snarkjs.groth16.verify(vkey, out.public_signals, out.proof))).toBe(true)
        const flipped = [...out.public_signals]
        flipped[0] = ((BigInt(flipped[0]!) + 1n) % FIELD_MODULUS).toString()
        expect(yield* Effect.promise(() => snarkjs.groth16.verify(vkey, flipped, out.proof))).toBe(false)
        // The pool's own verifier (cached keys) agrees.
        expect(yield* prover.verify(spec.circuit, out.proof, out.public_signals)).toBe(true)
        expect(yield* prover.verify(spec.circuit, out.proof, flipped)).toBe(false)
      }), 60_000)
  }

  it.effect("constraint violations fail with constraint_violation: multiplier a = 1, range value < min", () =>
    Effect.gen(function*() {
      const prover = yield* Prover
      const [a, b] = yield* Effect.all([
        Effect.flip(prover.prove("multiplier", { a: "1", b: "7" })),
        Effect.flip(prover.prove("range", { value: "17", min: "18", max: "100" }))
      ], { concurrency: 2 })
      expect(a).toMatchObject({ _tag: "ProverFailure", code: "constraint_violation" })
      expect(a?.message).toContain("Assert Failed")
      expect(b).toMatchObject({ _tag: "ProverFailure", code: "constraint_violation" })
    }))

  it.effect("non-canonical and unknown inputs fail with invalid_inputs before reaching snarkjs", () =>
    Effect.gen(function*() {
      const prover = yield* Prover
      const reduced = yield* Effect.flip(prover.prove("multiplier", { a: (FIELD_MODULUS + 3n).toString(), b: "11" }))
      expect(reduced).toMatchObject({ code: "invalid_inputs" })
      expect(reduced.message).toContain("inputs.a")
      expect(yield* Effect.flip(prover.prove("sudoku", {}))).toMatchObject({ code: "invalid_inputs" })
      expect(yield* prover.verify("multiplier", { pi_a: ["1", "2", "1"], pi_b: [], pi_c: [], protocol: "groth16", curve: "bn128" }, ["33"])).toBe(false)
    }))
})

describe("Prover timeout", () => {
  it.live("snarkjs: a proof past the timeout fails with timeout; its thread is replaced and the pool keeps working", () =>
    Effect.gen(function*() {
      const prover = yield* Prover
      const slow = yield* Effect.flip(prover.prove("merkle_membership", cases.merkle_membership!.inputs))
      expect(slow).toMatchObject({ _tag: "ProverFailure", code: "timeout" })
      const out = yield* prover.prove("multiplier", { a: "3", b: "11" })
      expect(out.public_signals).toEqual(["33"])
    }).pipe(Effect.provide(Groth16ProverLive({
      engine: "snarkjs",
      poolSize: 1,
      timeout: Duration.millis(400),
      circuits: ["multiplier", "merkle_membership"]
    }))), 60_000)
})

describe("Proofs over the real prover", () => {
  it.live("a proof requested through the core completes, and its proof_blob verifies with snarkjs", () =>
    Effect.gen(function*() {
      const account = yield* (yield* Accounts).create({ name: "e2e" })
      const principal: Principal = { account_id: account.id, scopes: SCOPES, via: { kind: "session" } }
      const proofs = yield* Proofs
      const { value } = yield* proofs.create(principal, { type: "multiplier", inputs: { a: 6, b: "7" } })
      const done = yield* proofs.get(account.id, value.proof_id).pipe(
        Effect.filterOrFail((p) => p.status === "completed" || p.status === "failed", () => "not settled yet"),
        Effect.retry(Schedule.spaced("20 millis").pipe(Schedule.upTo("20 seconds")))
      )
      expect(done).toMatchObject({ status: "completed", public_inputs: { c: "42" } })
      const proof = Option.getOrThrow(decodeProofBlob(done.proof_blob!))
      expect(yield* Effect.promise(() => snarkjs.groth16.verify(vkeyOf("multiplier"), ["42"], proof))).toBe(true)
      expect((yield* proofs.verify(principal, value.proof_id)).value.valid).toBe(true)
      const events = (yield* (yield* EventsRepo).list(account.id, { limit: 10 })).items.map((e) => e.type)
      expect(events).toEqual(["proof.completed", "proof.verified"])
    }).pipe(Effect.provide(ProofLoops.pipe(
      Layer.provideMerge(testCore(undefined, { prover: Groth16ProverLive({ poolSize: 1, circuits: ["multiplier"] }).pipe(Layer.orDie) })),
      Layer.provide(Layer.succeed(ProofsConfig, { ...DEFAULT_PROOFS_CONFIG, pollIntervalMs: 20 }))
    ))), 60_000)
})

describe("process exit", () => {
  it("a process that used the prover exits on its own with code 0", async () => {
    const script = fileURLToPath(new URL("./fixtures/proveOnce.ts", import.meta.url))
    const child = spawn(process.execPath, ["--import", "tsx", script], { stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk) => (stdout += String(chunk)))
    child.stderr.on("data", (chunk) => (stderr += String(chunk)))
    const code = await new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => {
        child.kill("SIGKILL")
        resolve(null)
      }, 30_000)
      child.on("exit", (c) => {
        clearTimeout(timer)
        resolve(c)
      })
    })
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" })
    // The layer logs its engine first; the script's result is the last line.
    const lines = stdout.trim().split("\n")
    expect(lines[0]).toMatch(/prover engine: (native|snarkjs)/)
    expect(JSON.parse(lines.at(-1)!)).toEqual({ public_signals: ["33"], valid: true })
  }, 40_000)
})
