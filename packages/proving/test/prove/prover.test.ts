import { afterAll, beforeAll, describe, expect, it, layer } from "@effect/vitest"
import {
  Accounts,
  ArtifactsRepo,
  BuiltinCircuits,
  type Circuit,
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
import { artifactsInMap, testCore } from "@mzk/testkit"
import { Duration, Effect, Either, Layer, Option, Schedule } from "effect"
import { spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import * as snarkjs from "snarkjs"
import { ArtifactFilesLive } from "../../src/artifacts/files.js"
import { BUILTIN_CIRCUITS, buildFilesOf, builtinCircuit, BuiltinCircuitsLive, FIELD_MODULUS } from "../../src/catalog.js"
import { checkInputs, type ProverPoolOptions, ProverPoolLive } from "../../src/prove/pool.js"
import { type Case, makeCases } from "../fixtures/inputs.js"
import { timesOutThenProves } from "../fixtures/poolTimeout.js"

const vkeyOf = (circuit: string) => JSON.parse(readFileSync(buildFilesOf(circuit).vkey, "utf8")) as unknown
const builtin = (name: string) => Option.getOrThrow(builtinCircuit(name))

// Built-in circuits need no artifact store: their files are this package's build.
const cacheDir = mkdtempSync(join(tmpdir(), "mzk-prover-cache-"))
const NoStoredArtifacts = Layer.succeed(ArtifactsRepo, artifactsInMap())
const pool = (options: ProverPoolOptions) =>
  ProverPoolLive(options).pipe(Layer.provide(ArtifactFilesLive({ cacheDir })), Layer.provide(NoStoredArtifacts))

let cases: Record<string, Case>
beforeAll(async () => {
  cases = await makeCases()
})
// snarkjs.groth16.verify in this thread starts the multi-threaded bn128 curve; stop it.
afterAll(async () => {
  rmSync(cacheDir, { recursive: true, force: true })
  await (globalThis as { curve_bn128?: { terminate(): Promise<void> } | null }).curve_bn128?.terminate()
})

const manifest = JSON.parse(readFileSync(new URL("../../build/manifest.json", import.meta.url), "utf8")) as {
  circuits: Record<string, { constraints: number; developmentOnly: boolean; files: Record<string, { sha256: string }> }>
}

describe("built-in circuits", () => {
  it("are ready records of owner builtin, with the build's verification keys, constraint counts and file digests", () => {
    expect(BUILTIN_CIRCUITS.map((c) => c.name)).toEqual(["multiplier", "range", "hash_preimage", "merkle_membership"])
    for (const c of BUILTIN_CIRCUITS) {
      const built = manifest.circuits[c.name]!
      expect(c).toMatchObject({ id: null, owner: "builtin", status: "ready", error: null, development_only: built.developmentOnly })
      expect(c.development_only).toBe(true)
      expect(c.constraints).toBe(built.constraints)
      expect(c.artifacts).toEqual({
        wasm: built.files[`${c.name}.wasm`]!.sha256,
        zkey: built.files[`${c.name}.zkey`]!.sha256,
        r1cs: null,
        sym: null
      })
      expect(c.verification_key).toEqual(vkeyOf(c.name))
      expect((c.verification_key as { nPublic: number }).nPublic, c.name).toBe(c.public_signals.length)
      expect(c.field_modulus).toBe(FIELD_MODULUS.toString())
    }
    expect(builtin("merkle_membership").inputs).toEqual([
      { name: "secret", visibility: "private", kind: "field", dimensions: [] },
      { name: "path_elements", visibility: "private", kind: "field", dimensions: [20] },
      { name: "path_indices", visibility: "private", kind: "bit", dimensions: [20] },
      { name: "root", visibility: "public", kind: "field", dimensions: [] }
    ])
  })

  it.effect("BuiltinCircuitsLive lists them and finds them by name", () =>
    Effect.gen(function*() {
      const builtins = yield* BuiltinCircuits
      expect(builtins.list).toBe(BUILTIN_CIRCUITS)
      expect(builtins.get("range")).toEqual(Option.some(builtin("range")))
      expect(builtins.get("sudoku")).toEqual(Option.none())
    }).pipe(Effect.provide(BuiltinCircuitsLive)))

  it("the prover's own input check (the core's rule) names each bad input by path, follows dimensions, and refuses non-canonical values", () => {
    const merkle = {
      secret: "1",
      root: FIELD_MODULUS.toString(),
      path_elements: [...Array(3).fill("0"), "-1", ...Array(16).fill("0")],
      path_indices: Array(20).fill("1")
    }
    expect(checkInputs(builtin("merkle_membership"), merkle)).toEqual(Either.left(
      "inputs.path_elements.3: must not be negative; inputs.root: must be less than the field modulus r"
    ))
    expect(checkInputs(builtin("multiplier"), { a: "3", b: 11 } as never)).toEqual(Either.right({ a: "3", b: "11" }))
    expect(checkInputs(builtin("range"), { value: "1", min: "0", max: (2n ** 64n).toString(), extra: "1" })).toEqual(Either.left(
      "inputs.max: must be less than 2^64 (an unsigned 64-bit integer); inputs.extra: is not an input of range"
    ))
    const grid: Circuit = {
      ...builtin("multiplier"),
      name: "grid",
      inputs: [{ name: "x", visibility: "private", kind: "field", dimensions: [2, 3] }]
    }
    expect(checkInputs(grid, { x: [["1", "2", "3"], ["4", "5", "6"]] } as never)).toEqual(Either.right({ x: [["1", "2", "3"], ["4", "5", "6"]] }))
    expect(checkInputs(grid, { x: [["1", "2", "3"], ["4", "05", ["6"]]] } as never)).toEqual(Either.left(
      "inputs.x.1.1: must be a decimal integer string without sign, spaces or leading zeros; inputs.x.1.2: must be a single integer, not an array"
    ))
    expect(checkInputs(grid, { x: [["1", "2"], "3"] } as never)).toEqual(Either.left(
      "inputs.x.0: must have exactly 3 elements, got 2; inputs.x.1: must be an array of 3 integers"
    ))
    expect(checkInputs(grid, {})).toEqual(Either.left("inputs.x: is required"))
  })
})

// Before the layer(…) below: @effect/vitest's layer() assigns its own effect/scoped onto the shared
// `it`, so a top-level it.scoped after it runs without the TestClock.
describe("Prover timeout", () => {
  it.scoped("snarkjs: a proof past the timeout fails with timeout; its thread is replaced and the pool keeps working", () =>
    timesOutThenProves(cases.merkle_membership!.inputs).pipe(Effect.provide(pool({
      engine: "snarkjs",
      poolSize: 1,
      timeout: "5 seconds",
      preload: ["multiplier", "merkle_membership"]
    }))), 120_000)
})

layer(pool({ poolSize: 2 }), { timeout: 60_000, excludeTestServices: true })("ProverPool", (it) => {
  for (const circuit of BUILTIN_CIRCUITS) {
    it.effect(`${circuit.name}: a proof from the pool verifies with snarkjs and the committed key; a flipped public signal does not`, () =>
      Effect.gen(function*() {
        const prover = yield* Prover
        const { inputs, publicSignals } = cases[circuit.name]!
        const out = yield* prover.prove(circuit, inputs)
        expect(out.public_signals).toEqual(publicSignals)
        const vkey = vkeyOf(circuit.name)
        expect(yield* Effect.promise(() => snarkjs.groth16.verify(vkey, out.public_signals, out.proof))).toBe(true)
        const flipped = [...out.public_signals]
        flipped[0] = ((BigInt(flipped[0]!) + 1n) % FIELD_MODULUS).toString()
        expect(yield* Effect.promise(() => snarkjs.groth16.verify(vkey, flipped, out.proof))).toBe(false)
        // The pool's own verifier (cached keys) agrees.
        expect(yield* prover.verify(circuit, out.proof, out.public_signals)).toBe(true)
        expect(yield* prover.verify(circuit, out.proof, flipped)).toBe(false)
      }), 60_000)
  }

  it.effect("constraint violations fail with constraint_violation: multiplier a = 1, range value < min", () =>
    Effect.gen(function*() {
      const prover = yield* Prover
      const [a, b] = yield* Effect.all([
        Effect.flip(prover.prove(builtin("multiplier"), { a: "1", b: "7" })),
        Effect.flip(prover.prove(builtin("range"), { value: "17", min: "18", max: "100" }))
      ], { concurrency: 2 })
      expect(a).toMatchObject({ _tag: "ProverFailure", code: "constraint_violation" })
      expect(a?.message).toContain("Assert Failed")
      expect(b).toMatchObject({ _tag: "ProverFailure", code: "constraint_violation" })
    }))

  it.effect("each proof reports the thread's own time on it (proving_ms), within the time the call took, failed ones too", () =>
    Effect.gen(function*() {
      const prover = yield* Prover
      const [took, out] = yield* Effect.timed(prover.prove(builtin("multiplier"), { a: "3", b: "11" }))
      expect(out.proving_ms).toBeGreaterThan(0)
      expect(out.proving_ms).toBeLessThanOrEqual(Duration.toMillis(took))
      const [tookToFail, failure] = yield* Effect.timed(Effect.flip(prover.prove(builtin("multiplier"), { a: "1", b: "7" })))
      expect(failure).toMatchObject({ code: "constraint_violation" })
      expect(failure.proving_ms).toBeGreaterThan(0)
      expect(failure.proving_ms).toBeLessThanOrEqual(Duration.toMillis(tookToFail))
    }))

  it.effect("non-canonical and unknown inputs fail with invalid_inputs before reaching snarkjs; circuits not ready are refused", () =>
    Effect.gen(function*() {
      const prover = yield* Prover
      const multiplier = builtin("multiplier")
      const reduced = yield* Effect.flip(prover.prove(multiplier, { a: (FIELD_MODULUS + 3n).toString(), b: "11" }))
      expect(reduced).toMatchObject({ code: "invalid_inputs" })
      expect(reduced.message).toContain("inputs.a")
      expect(yield* Effect.flip(prover.prove(multiplier, { a: "3", c: "1" }))).toMatchObject({ code: "invalid_inputs" })
      expect(yield* prover.verify(multiplier, { pi_a: ["1", "2", "1"], pi_b: [], pi_c: [], protocol: "groth16", curve: "bn128" }, ["33"])).toBe(false)
      const compiling: Circuit = { ...multiplier, status: "compiling", artifacts: null }
      expect(yield* Effect.flip(prover.prove(compiling, { a: "3", b: "11" }))).toMatchObject({ code: "internal", message: "Circuit multiplier is not ready (compiling)" })
    }))
})

describe("Proofs over the real prover", () => {
  it.live("a proof requested through the core completes, and its proof_blob verifies with snarkjs", () =>
    Effect.gen(function*() {
      const account = yield* (yield* Accounts).create({ name: "e2e" })
      const principal: Principal = { account_id: account.id, scopes: SCOPES, via: { kind: "session" } }
      const proofs = yield* Proofs
      const value = yield* proofs.create(principal.account_id, { type: "multiplier", inputs: { a: 6, b: "7" } })
      const done = yield* proofs.get(account.id, value.proof_id).pipe(
        Effect.filterOrFail((p) => p.status === "completed" || p.status === "failed", () => "not settled yet"),
        Effect.retry(Schedule.spaced("20 millis").pipe(Schedule.upTo("20 seconds")))
      )
      expect(done).toMatchObject({ status: "completed", public_inputs: { c: "42" } })
      const proof = Option.getOrThrow(decodeProofBlob(done.proof_blob!))
      expect(yield* Effect.promise(() => snarkjs.groth16.verify(vkeyOf("multiplier"), ["42"], proof))).toBe(true)
      expect((yield* proofs.verify(principal.account_id, value.proof_id)).valid).toBe(true)
      const events = (yield* (yield* EventsRepo).list(account.id, { limit: 10 })).items.map((e) => e.type)
      expect(events).toEqual(["proof.verified", "proof.completed"])
    }).pipe(Effect.provide(ProofLoops.pipe(
      Layer.provideMerge(testCore(undefined, { prover: pool({ poolSize: 1, preload: ["multiplier"] }).pipe(Layer.orDie), builtins: BuiltinCircuitsLive })),
      Layer.provide(Layer.succeed(ProofsConfig, { ...DEFAULT_PROOFS_CONFIG, pollIntervalMs: 20 }))
    ))), 60_000)
})

describe("process exit", () => {
  it("a process that used the prover exits on its own with code 0", async () => {
    // Proves once through the layer and returns without any explicit exit: the process must end
    // on its own, which it does only if no prover thread (or curve thread) is left running.
    const src = (file: string) => JSON.stringify(new URL(`../../src/${file}`, import.meta.url).href)
    const script = `
      import { ArtifactsRepo, Prover } from "@mzk/core"
      import { artifactsInMap } from "@mzk/testkit"
      import { Effect, Layer, Option } from "effect"
      import { ArtifactFilesLive } from ${src("artifacts/files.ts")}
      import { builtinCircuit } from ${src("catalog.ts")}
      import { ProverPoolLive } from ${src("prove/pool.ts")}
      const multiplier = Option.getOrThrow(builtinCircuit("multiplier"))
      const program = Effect.gen(function*() {
        const prover = yield* Prover
        const out = yield* prover.prove(multiplier, { a: "3", b: "11" })
        const valid = yield* prover.verify(multiplier, out.proof, out.public_signals)
        console.log(JSON.stringify({ public_signals: out.public_signals, valid }))
      }).pipe(Effect.provide(ProverPoolLive({ poolSize: 2 }).pipe(
        Layer.provide(ArtifactFilesLive({ cacheDir: ${JSON.stringify(cacheDir)} })),
        Layer.provide(Layer.succeed(ArtifactsRepo, artifactsInMap()))
      )))
      await Effect.runPromise(program)
    `
    // Under node_modules (git-ignored), so its bare imports resolve from this package.
    const dir = mkdtempSync(fileURLToPath(new URL("../../node_modules/.cache-prove-once-", import.meta.url)))
    const file = join(dir, "proveOnce.mts")
    writeFileSync(file, script)
    const child = spawn(process.execPath, ["--import", "tsx", file], { stdio: ["ignore", "pipe", "pipe"] })
    child.on("exit", () => rmSync(dir, { recursive: true, force: true }))
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
