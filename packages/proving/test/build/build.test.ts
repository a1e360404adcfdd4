import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import type { BuildFailure, BuildInput, BuildOutput, Digest, StoredBuildFile } from "@mzk/core"
import { Effect, Either, Stream } from "effect"
import { createHash } from "node:crypto"
import { spawn, spawnSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import * as snarkjs from "snarkjs"
import { eventually } from "@mzk/testkit"
import { type CircuitCompilerOptions, developmentSetupIsNative, makeCircuitCompiler, inspectPtau } from "../../src/build/compiler.js"
import { checkUpload, includesOf } from "../../src/build/upload.js"
import { pointOffset, twistPoints, zkeyG2 } from "../../../prover-native/test/zkeyFixture.js"
import { makeTestPtau, makeUnpreparedTestPtau } from "../fixtures/universal.js"

const require = createRequire(import.meta.url)
const enc = (text: string) => new TextEncoder().encode(text)
const GiB = 2 ** 30

// Not one of the built-in four: a public array, a public matrix, outputs, a circomlib include and
// an include of another uploaded file.
const MAIN = `pragma circom 2.1.0;
include "circomlib/circuits/comparators.circom";
include "lib/sum.circom";

template Sample(n) {
  signal input xs[n];
  signal input m[2][2];
  signal input secret;
  signal output lt;
  signal output s[2];
  component c = LessThan(16);
  c.in[0] <== secret;
  c.in[1] <== xs[0];
  lt <== c.out;
  s[0] <== Sum()(xs[1], m[1][0]);
  s[1] <== secret * m[0][1];
}
component main {public [xs, m]} = Sample(3);
`
const SUM = `pragma circom 2.1.0;
template Sum() { signal input a; signal input b; signal output c; c <== a + b; }
`
const sample: BuildInput = { kind: "circom", main: "main.circom", files: { "main.circom": enc(MAIN), "lib/sum.circom": enc(SUM) } }
const sampleInputs = { xs: ["5", "6", "7"], m: [["1", "2"], ["3", "4"]], secret: "3" }
// lt = 3 < 5, s[0] = 6 + 3, s[1] = 3 * 2; then the public inputs in order
const sampleSignals = ["1", "9", "6", "5", "6", "7", "1", "2", "3", "4"]

const tiny = (body: string): BuildInput => ({
  kind: "circom",
  main: "main.circom",
  files: { "main.circom": enc(`pragma circom 2.1.0;\n${body}`) }
})

// Six wires, two private inputs, one output and three constraints, as the built-in multiplier has:
// only their constraints tell them apart.
const SUMSQ = `template SumSquaresSquared() {
  signal input a;
  signal input b;
  signal output c;
  signal a2 <== a * a;
  signal b2 <== b * b;
  c <== (a2 + b2) * (a2 + b2);
}
component main = SumSquaresSquared();
`
// A circuit the all-zero input fails: a must be invertible.
const NONZERO = `template NonZero() {
  signal input a;
  signal output c;
  signal inv;
  inv <-- 1 / a;
  a * inv === 1;
  c <== a * a;
}
component main = NonZero();
`
const builtinFile = (name: string, ext: string) =>
  new Uint8Array(readFileSync(fileURLToPath(new URL(`../../build/${name}/${name}.${ext}`, import.meta.url))))

let work: string
let ptau: string
let options: CircuitCompilerOptions
/** What a build of bytes gives: its artifacts as bytes (a build gives stored files back only when given them). */
type BuiltBytes = BuildOutput & { readonly wasm: Uint8Array; readonly zkey: Uint8Array; readonly r1cs: Uint8Array | null }
let built: BuiltBytes

const run = <A>(effect: Effect.Effect<A, BuildFailure>) => Effect.runPromise(Effect.either(effect))
const build = (input: BuildInput, opts: CircuitCompilerOptions = options) => run(makeCircuitCompiler(opts).build(input))
const succeeded = async (input: BuildInput, opts?: CircuitCompilerOptions) => {
  const result = await build(input, opts)
  if (Either.isLeft(result)) throw new Error(`build failed: ${JSON.stringify(result.left)}`)
  const out = result.right
  if (!(out.wasm instanceof Uint8Array) || !(out.zkey instanceof Uint8Array) || !(out.r1cs === null || out.r1cs instanceof Uint8Array)) {
    throw new Error("a build gave stored files back")
  }
  return out as BuiltBytes
}
const failed = async (input: BuildInput, opts?: CircuitCompilerOptions) => {
  const result = await build(input, opts)
  if (Either.isRight(result)) throw new Error("build succeeded where it should have failed")
  const { code, message, file, line } = result.left
  return { code, message, file, line }
}
const artifacts = (out: BuildOutput, overrides: Partial<Extract<BuildInput, { kind: "artifacts" }>> = {}): BuildInput => ({
  kind: "artifacts",
  wasm: out.wasm,
  zkey: out.zkey,
  sym: out.sym!,
  r1cs: out.r1cs,
  ...overrides
})

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "mzk-build-test-"))
  // The same steps a server with --dev-ptau takes (buildJob.mjs), made here once and shared, at
  // power 8: enough for circuits of up to 255 constraints + public signals.
  const started = Date.now()
  mkdirSync(join(work, "ptau"))
  ptau = join(work, "ptau", "dev_pot8.ptau")
  renameSync(await makeTestPtau(work, 8), ptau)
  await makeUnpreparedTestPtau(work, 8)
  console.log(`development ptau, power 8: ${Date.now() - started} ms`)
  options = { ptau, timeoutMs: 120_000, memoryBytes: 2 * GiB, workDir: join(work, "builds") }
  const t = Date.now()
  built = await succeeded(sample)
  console.log(`sample circuit build: ${Date.now() - t} ms`)
}, 120_000)

afterAll(async () => {
  await (globalThis as { curve_bn128?: { terminate(): Promise<void> } | null }).curve_bn128?.terminate()
  rmSync(work, { recursive: true, force: true })
})

describe("circom sources", () => {
  it("derive inputs, dimensions and public signals in wire order", () => {
    expect(built.inputs).toEqual([
      { name: "xs", visibility: "public", kind: "field", dimensions: [3] },
      { name: "m", visibility: "public", kind: "field", dimensions: [2, 2] },
      { name: "secret", visibility: "private", kind: "field", dimensions: [] }
    ])
    expect(built.public_signals).toEqual(["lt", "s[0]", "s[1]", "xs[0]", "xs[1]", "xs[2]", "m[0][0]", "m[0][1]", "m[1][0]", "m[1][1]"])
    expect(built.constraints).toBeGreaterThan(16)
    expect(built.constraints).toBeLessThan(40)
    expect(built.development_only).toBe(false)
    expect(built.r1cs?.length).toBeGreaterThan(0)
    expect(new TextDecoder().decode(built.sym!)).toContain("main.m[1][1]")
    expect(new TextDecoder().decode(built.wasm.subarray(0, 4))).toBe("\0asm")
    expect((built.verification_key as { nPublic: number }).nPublic).toBe(10)
  })

  it("make a zkey that snarkjs proves with and the returned verification key verifies", async () => {
    const { proof, publicSignals } = await snarkjs.groth16.fullProve(sampleInputs, built.wasm, built.zkey)
    expect(publicSignals).toEqual(sampleSignals)
    expect(await snarkjs.groth16.verify(built.verification_key, publicSignals, proof)).toBe(true)
    expect(await snarkjs.groth16.verify(built.verification_key, ["0", ...publicSignals.slice(1)], proof)).toBe(false)
  })

  it("keep private inputs the optimiser took out of the witness, and outputs declared after inputs", async () => {
    const source = tiny(`template T() {
  signal input a;
  signal input unused;
  signal input p;
  signal t;
  t <== a;
  signal output b;
  signal output c;
  signal input late[2];
  b <== t * t;
  c <== p + late[0] * late[1];
}
component main {public [p, late]} = T();
`)
    const out = await succeeded(source)
    // --O2 drops `a` and `unused` from the witness (the sym gives them wire -1); they are still inputs.
    expect(new TextDecoder().decode(out.sym!)).toMatch(/,-1,\d+,main\.unused/)
    expect(out.inputs.map((i) => `${i.name}:${i.visibility}:${i.dimensions.join("x")}`)).toEqual(["p:public:", "late:public:2", "a:private:", "unused:private:"])
    expect(out.public_signals).toEqual(["b", "c", "p", "late[0]", "late[1]"])
    const { proof, publicSignals } = await snarkjs.groth16.fullProve({ a: "3", unused: "9", p: "1", late: ["2", "5"] }, out.wasm, out.zkey)
    expect(publicSignals).toEqual(["9", "11", "1", "2", "5"])
    expect(await snarkjs.groth16.verify(out.verification_key, publicSignals, proof)).toBe(true)
    const prebuilt = await succeeded(artifacts(out, { r1cs: null }))
    expect(prebuilt.inputs).toEqual(out.inputs)
    expect(prebuilt.public_signals).toEqual(out.public_signals)
    expect(prebuilt.constraints).toBe(out.constraints)
  })

  it("set up with fresh entropy each time, and mark a development ptau's circuits development_only", async () => {
    const again = await succeeded(sample, { timeoutMs: 120_000, memoryBytes: 2 * GiB, developmentPtau: { power: 8, dir: dirname(ptau) } })
    expect(again.development_only).toBe(true)
    expect(again.wasm).toEqual(built.wasm)
    const delta = (out: BuildOutput) => (out.verification_key as { vk_delta_2: unknown }).vk_delta_2
    expect(delta(again)).not.toEqual(delta(built))
  })

  it.skipIf(!developmentSetupIsNative())("set development circuits up natively: no ptau made, no power cap, and they prove", async () => {
    const dir = join(work, "native-dev")
    // Power 4 (16 rows) could not hold the sample (its LessThan alone has 17 constraints): no cap applies.
    const out = await succeeded(sample, { timeoutMs: 120_000, memoryBytes: 2 * GiB, developmentPtau: { power: 4, dir } })
    expect(existsSync(join(dir, "dev_pot4.ptau"))).toBe(false)
    expect(out.development_only).toBe(true)
    expect(out.constraints).toBeGreaterThan(16)
    // The contribution the native setup names in the key's MPC parameters.
    expect(Buffer.from(out.zkey).includes(Buffer.from("mzk development setup"))).toBe(true)
    expect(out.public_signals).toEqual(built.public_signals)
    const { proof, publicSignals } = await snarkjs.groth16.fullProve(sampleInputs, out.wasm, out.zkey)
    expect(publicSignals).toEqual(sampleSignals)
    expect(await snarkjs.groth16.verify(out.verification_key, publicSignals, proof)).toBe(true)
    const tampered = [...publicSignals]
    tampered[1] = "10"
    expect(await snarkjs.groth16.verify(out.verification_key, tampered, proof)).toBe(false)
  })

  it("generate the development ptau on first use and reuse it after", async () => {
    const dir = join(work, "devptau")
    // The snarkjs path, which a server without the native addon takes.
    const opts = { timeoutMs: 120_000, memoryBytes: 2 * GiB, developmentPtau: { power: 4, dir }, developmentSetup: "snarkjs" as const }
    const input = tiny("template M() { signal input a; signal input b; signal output c; c <== a * b; }\ncomponent main = M();\n")
    const first = await succeeded(input, opts)
    const file = join(dir, "dev_pot4.ptau")
    const made = statSync(file).mtimeMs
    expect(first.development_only).toBe(true)
    expect(first.public_signals).toEqual(["c"])
    expect(first.inputs.map((i) => `${i.name}:${i.visibility}`)).toEqual(["a:private", "b:private"])
    await Effect.runPromise(inspectPtau(file).pipe(Effect.map((h) => expect(h).toMatchObject({ power: 4, bn128: true, prepared: true }))))
    await succeeded(input, opts)
    expect(statSync(file).mtimeMs).toBe(made)
  })

  it("fail with the compiler's message and the upload's file and line", async () => {
    const syntax = await failed(tiny("template T() {\n  signal input a;\n  signal output b\n  b <== a * a;\n}\ncomponent main = T();\n"))
    expect(syntax).toMatchObject({ code: "compile_error", file: "main.circom", line: 4 })
    expect(syntax.message).toMatch(/Missing semicolon/)
    expect(syntax.message).toContain("\"main.circom\":4")
    expect(syntax.message).not.toMatch(/src\//)

    const nested = await failed({
      kind: "circom",
      main: "main.circom",
      files: {
        "main.circom": enc("pragma circom 2.1.0;\ninclude \"gadgets/cube.circom\";\ntemplate T() { signal input a; signal output b; b <== Cube()(a); }\ncomponent main = T();\n"),
        "gadgets/cube.circom": enc("pragma circom 2.1.0;\n\ntemplate Cube() {\n  signal input a; signal output b; b <== a * a * a;\n}\n")
      }
    })
    expect(nested).toMatchObject({ code: "compile_error", file: "gadgets/cube.circom", line: 4 })
    expect(nested.message).toMatch(/Non quadratic/)

    // Found missing before circom runs: circom itself says neither where nor anything an uploader can do ("use -l").
    const t = Date.now()
    const missing = await failed(tiny("include \"nothere.circom\";\ntemplate T() { signal input a; signal output b; b <== a; }\ncomponent main = T();\n"))
    expect(missing).toMatchObject({ code: "compile_error", file: "main.circom", line: 2 })
    expect(missing.message).toContain("nothere.circom was not uploaded")
    expect(missing.message).not.toMatch(/-l\b|include paths/)
    console.log(`missing include refused in ${Date.now() - t} ms`)
  })

  it("refuse an include that leaves the upload before running circom, naming file and line", async () => {
    const t = Date.now()
    const escape = await failed({
      kind: "circom",
      main: "main.circom",
      files: {
        "main.circom": enc("pragma circom 2.1.0;\ninclude \"sub/a.circom\";\ncomponent main = A();\n"),
        "sub/a.circom": enc("pragma circom 2.1.0;\n// include \"../../commented.circom\";\n\ninclude \"../../../etc/passwd\";\ntemplate A() { signal input a; signal output b; b <== a; }\n")
      }
    })
    expect(escape).toMatchObject({ code: "include_outside_upload", file: "sub/a.circom", line: 4 })
    expect(escape.message).toContain("../../../etc/passwd")
    expect(Date.now() - t).toBeLessThan(1000)

    const absolute = await failed(tiny("include \"/etc/passwd\";\ntemplate T() { signal input a; signal output b; b <== a; }\ncomponent main = T();\n"))
    expect(absolute).toMatchObject({ code: "include_outside_upload", file: "main.circom", line: 2 })

    const path = await failed({ kind: "circom", main: "main.circom", files: { "main.circom": enc(MAIN), "../lib/sum.circom": enc(SUM) } })
    expect(path.code).toBe("include_outside_upload")
    expect(path.message).toContain("../lib/sum.circom")
  })

  it("refuse a circuit too large for the ptau, naming both powers", async () => {
    const large = await failed(tiny("include \"circomlib/circuits/bitify.circom\";\ntemplate T() { signal input a; signal output b[300]; b <== Num2Bits(300)(a); }\ncomponent main = T();\n"))
    expect(large.code).toBe("circuit_too_large")
    expect(large.message).toMatch(/power 10\b/)
    expect(large.message).toMatch(/ptau has power 8\b/)
  })

  it("refuse circom sources when the server has no powers of tau", async () => {
    const none = await failed(sample, { timeoutMs: 60_000, memoryBytes: 2 * GiB })
    expect(none.code).toBe("internal")
    expect(none.message).toMatch(/no powers of tau.*--ptau FILE.*--dev-ptau/)
    const prebuilt = await succeeded(artifacts(built), { timeoutMs: 60_000, memoryBytes: 2 * GiB })
    expect(prebuilt.development_only).toBe(false)
  })

  it("refuse an unusable ptau file, resolving a relative path from the server's directory", async () => {
    const opts = { ...options, ptau: relative(process.cwd(), join(work, "p1.ptau")) }
    const unprepared = await failed(sample, opts)
    expect(unprepared.code).toBe("internal")
    expect(unprepared.message).toMatch(/not prepared for phase 2/)
    const missing = await failed(sample, { ...options, ptau: join(work, "missing.ptau") })
    expect(missing.message).toMatch(/powers of tau file is unusable.*ENOENT/)
  })

  it("stop a build past its time limit", async () => {
    const t = Date.now()
    const slow = await failed(sample, { ...options, timeoutMs: 300 })
    expect(slow.code).toBe("compile_timeout")
    expect(slow.message).toMatch(/300 ms/)
    expect(Date.now() - t).toBeLessThan(3000)
  })

  it("stop a build past its memory ceiling", async () => {
    const big = await failed(sample, { ...options, memoryBytes: 64 * 2 ** 20 })
    expect(big.code).toBe("compile_memory_exceeded")
    console.log(`memory ceiling: ${big.message}`)
  })

  it("end with the process that started them: a SIGKILLed worker leaves no build running", async () => {
    const script = fileURLToPath(new URL("../fixtures/buildForever.ts", import.meta.url))
    const worker = spawn(process.execPath, ["--import", "tsx", script, ptau, join(work, "orphans")], { stdio: "ignore" })
    const children = () => {
      try {
        return readFileSync(`/proc/${worker.pid}/task/${worker.pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number)
      } catch {
        return []
      }
    }
    let build: number | undefined
    const running = () => build !== undefined && existsSync(`/proc/${build}`) && !/^State:\s+Z/m.test(readFileSync(`/proc/${build}/status`, "utf8"))
    try {
      // The worker loads its sources through tsx first: on a loaded machine that takes a while.
      build = await eventually(async () => children().find((pid) => readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("buildJob.mjs")), 120_000, 50)
      await new Promise((r) => setTimeout(r, 1000))
      expect(running(), "the build should still be compiling").toBe(true)
      worker.kill("SIGKILL")
      // The build notices its parent is gone (its IPC channel closes) and ends.
      await eventually(async () => (running() ? undefined : true), 60_000, 50)
    } finally {
      if (worker.exitCode === null && worker.signalCode === null) worker.kill("SIGKILL")
      if (running()) process.kill(build!, "SIGKILL")
    }
  }, 240_000)

  it("leave no build directory behind", () => {
    const left = existsSync(options.workDir!) ? spawnSync("ls", ["-A", options.workDir!], { encoding: "utf8" }).stdout.trim() : ""
    expect(left).toBe("")
  })
})

describe("prebuilt artifacts", () => {
  it("are checked and described like a build, with or without the r1cs", async () => {
    for (const r1cs of [built.r1cs, null]) {
      const out = await succeeded(artifacts(built, { r1cs }))
      expect(out.inputs).toEqual(built.inputs)
      expect(out.public_signals).toEqual(built.public_signals)
      expect(out.constraints).toBe(built.constraints)
      expect(out.verification_key).toEqual(built.verification_key)
      expect(out.development_only).toBe(false)
      expect(out.zkey).toBe(built.zkey)
      expect(out.r1cs).toBe(r1cs)
    }
  })

  it("given as stored files, are written to the build chunk by chunk, checked the same, and given back unchanged", async () => {
    // Chunks of odd sizes, as storage might cut them; the build must reassemble them exactly.
    const stored = (bytes: Uint8Array): StoredBuildFile => ({
      digest: createHash("sha256").update(bytes).digest("hex") as Digest,
      size: bytes.length,
      chunks: Stream.fromIterable(Array.from({ length: Math.ceil(bytes.length / 4097) }, (_, i) => bytes.subarray(i * 4097, (i + 1) * 4097)))
    })
    const files = { wasm: stored(built.wasm), zkey: stored(built.zkey), r1cs: stored(built.r1cs!) }
    const result = await build(artifacts(built, files))
    if (Either.isLeft(result)) throw new Error(`build failed: ${JSON.stringify(result.left)}`)
    expect(result.right.verification_key).toEqual(built.verification_key)
    expect(result.right.constraints).toBe(built.constraints)
    // The same stored files: nothing to store again.
    expect(result.right.zkey).toBe(files.zkey)
    expect(result.right.wasm).toBe(files.wasm)
    // The build reads what the stream gave, not a copy from elsewhere: a zkey cut short is refused.
    const refused = await failed(artifacts(built, { ...files, zkey: stored(built.zkey.subarray(0, built.zkey.length - 4096)) }))
    expect(refused.code).toBe("invalid_artifacts")
  })

  it("refuse a corrupt zkey", async () => {
    const truncated = await failed(artifacts(built, { zkey: built.zkey.subarray(0, built.zkey.length - 100) }))
    expect(truncated.code).toBe("invalid_artifacts")
    expect(truncated.message).toMatch(/truncated/)

    const noise = await failed(artifacts(built, { zkey: enc("definitely not a zkey, just some text") }))
    expect(noise).toMatchObject({ code: "invalid_artifacts" })

    // Flip a byte inside alpha1 (section 2 of the zkey): the layout still parses, the point is off the curve.
    const flipped = built.zkey.slice()
    const view = new DataView(flipped.buffer, flipped.byteOffset)
    let pos = 12
    while (view.getUint32(pos, true) !== 2) pos += 12 + Number(view.getBigUint64(pos + 4, true))
    const alpha1 = pos + 12 + 4 + 32 + 4 + 32 + 12
    flipped[alpha1 + 5] = flipped[alpha1 + 5]! ^ 0x01
    const offCurve = await failed(artifacts(built, { zkey: flipped }))
    expect(offCurve.code).toBe("invalid_artifacts")
    expect(offCurve.message).toMatch(/corrupt|curve/)

    const wasm = await failed(artifacts(built, { wasm: enc("not wasm") }))
    expect(wasm.code).toBe("invalid_artifacts")
  })

  it("refuse a zkey that is not for bn128", async () => {
    const t = Date.now()
    const zkey = await bls12381Zkey()
    console.log(`bls12-381 zkey: ${Date.now() - t} ms`)
    const other = await failed(artifacts(built, { zkey }))
    expect(other.code).toBe("invalid_artifacts")
    expect(other.message).toMatch(/bls12-381.*bn128/)
  }, 60_000)

  it("refuse a zkey, sym or r1cs that does not match the wasm", async () => {
    const otherZkey = await failed(artifacts(built, { zkey: builtinFile("multiplier", "zkey"), r1cs: null }))
    expect(otherZkey.code).toBe("artifact_mismatch")
    expect(otherZkey.message).toMatch(/wires/)

    const otherWasm = await failed(artifacts(built, { wasm: builtinFile("range", "wasm"), r1cs: null }))
    expect(otherWasm.code).toBe("artifact_mismatch")

    const otherSym = await failed(artifacts(built, { sym: enc("1,1,0,main.out\n2,2,0,main.in\n"), r1cs: null }))
    expect(otherSym.code).toBe("artifact_mismatch")

    const small = await succeeded(tiny("template M() { signal input a; signal input b; signal output c; c <== a * b; }\ncomponent main = M();\n"))
    const otherR1cs = await failed(artifacts(built, { r1cs: small.r1cs }))
    expect(otherR1cs.code).toBe("artifact_mismatch")
  })
})

describe("prebuilt artifacts that do not belong together", () => {
  let sumsq: BuiltBytes
  let nonzero: BuiltBytes
  beforeAll(async () => {
    sumsq = await succeeded(tiny(SUMSQ))
    nonzero = await succeeded(tiny(NONZERO))
  }, 120_000)

  it("are accepted when they do belong together, with or without the r1cs and sample inputs", async () => {
    for (const r1cs of [sumsq.r1cs, null]) {
      const out = await succeeded(artifacts(sumsq, { r1cs }))
      expect(out.public_signals).toEqual(["c"])
      expect(out.verification_key).toEqual(sumsq.verification_key)
    }
    await succeeded(artifacts(sumsq, { r1cs: null, sample_inputs: enc(JSON.stringify({ a: 3, b: "4" })) }))
    // Another writer may order a constraint's terms otherwise: the same terms in another order still match the r1cs.
    const reordered = sumsq.zkey.slice()
    const coefficients = pointOffset(reordered, 4, 0, 1) + 4
    const [first, second] = [reordered.slice(coefficients, coefficients + 44), reordered.slice(coefficients + 44, coefficients + 88)]
    expect(first).not.toEqual(second)
    reordered.set(second, coefficients)
    reordered.set(first, coefficients + 44)
    await succeeded(artifacts(sumsq, { zkey: reordered }))
  })

  it("refuse a zkey of another circuit with as many wires, inputs and constraints: its proof of the wasm's witness does not verify", async () => {
    const multiplierZkey = builtinFile("multiplier", "zkey")
    const zero = await failed(artifacts(sumsq, { zkey: multiplierZkey, r1cs: null }))
    expect(zero.code).toBe("artifact_mismatch")
    expect(zero.message).toMatch(/all-zero input.*does not verify/)
    const sampled = await failed(artifacts(sumsq, { zkey: multiplierZkey, r1cs: null, sample_inputs: enc(JSON.stringify({ a: 3, b: 4 })) }))
    expect(sampled.code).toBe("artifact_mismatch")
    expect(sampled.message).toMatch(/sample inputs.*does not verify/)
  })

  it("refuse a zkey whose constraints are not the r1cs's, naming the first that differs", async () => {
    const mixed = await failed(artifacts(sumsq, { zkey: builtinFile("multiplier", "zkey") }))
    expect(mixed.code).toBe("artifact_mismatch")
    expect(mixed.message).toMatch(/the zkey's constraints are not the r1cs's.*constraint \d+/)
  })

  it("prove a sample input where the all-zero one fails the circuit; without sample inputs or the r1cs, refuse with sample_inputs_required", async () => {
    const unchecked = await failed(artifacts(nonzero, { r1cs: null }))
    expect(unchecked.code).toBe("sample_inputs_required")
    expect(unchecked.message).toMatch(/all-zero input.*Assert Failed/)
    expect(unchecked.message).toMatch(/sample_inputs.*r1cs/)
    await succeeded(artifacts(nonzero, { r1cs: null, sample_inputs: enc(JSON.stringify({ a: "5" })) }))
    await succeeded(artifacts(nonzero))
    for (const [text, reason] of [
      [JSON.stringify({ a: 0 }), /Assert Failed/],
      [JSON.stringify({ a: 5, b: 1 }), /name b, not an input of this circuit \(its inputs: a\)/],
      [JSON.stringify({}), /Not all inputs have been set/],
      ["{\"a\": ", /JSON/],
      ["[5]", /JSON object/]
    ] as const) {
      const refused = await failed(artifacts(nonzero, { r1cs: null, sample_inputs: enc(text) }))
      expect(refused.code, text).toBe("invalid_artifacts")
      expect(refused.message, text).toMatch(/sample inputs/)
      expect(refused.message, text).toMatch(reason)
    }
  })

  it("refuse a zkey with a bad point in any section: off the curve, or on the twist outside G2", async () => {
    const flipped = (section: number, size: number, index: number) => {
      const zkey = built.zkey.slice()
      const at = pointOffset(zkey, section, index, size)
      zkey[at + 7] = zkey[at + 7]! ^ 0x20
      return zkey
    }
    const firstPresent = (section: number, size: number) => {
      for (let i = 0; ; i++) {
        const at = pointOffset(built.zkey, section, i, size)
        if (built.zkey.subarray(at, at + size).some((b) => b !== 0)) return i
      }
    }
    for (const [section, size, name] of [[3, 64, "IC"], [5, 64, "A points"], [6, 64, "B1 points"], [7, 128, "B2 points"], [8, 64, "C points"], [9, 64, "H points"]] as const) {
      const index = firstPresent(section, size)
      const refused = await failed(artifacts(built, { zkey: flipped(section, size, index) }))
      expect(refused.code, name).toBe("invalid_artifacts")
      expect(refused.message, name).toContain(`point ${index} of section ${section} (${name}) is not on the curve`)
    }
    const delta2 = built.zkey.slice()
    const at = pointOffset(delta2, 2, 0, 1) + 4 + 32 + 4 + 32 + 12 + 64 + 64 + 128 + 128 + 64
    delta2[at + 7] = delta2[at + 7]! ^ 0x20
    expect(await failed(artifacts(built, { zkey: delta2 }))).toMatchObject({ code: "invalid_artifacts", message: expect.stringMatching(/delta2.*not on the curve/) })
    const outside = built.zkey.slice()
    const b2 = firstPresent(7, 128)
    outside.set(zkeyG2(twistPoints(1, 50n)[0]!), pointOffset(outside, 7, b2, 128))
    expect(await failed(artifacts(built, { zkey: outside }))).toMatchObject({
      code: "invalid_artifacts",
      message: expect.stringContaining(`point ${b2} of section 7 (B2 points) is on the twist but not in the r-order subgroup G2`)
    })
  })
})

describe("solidityVerifier", () => {
  const compiler = () => makeCircuitCompiler(options)

  it("renders snarkjs's Groth16 template for the key", async () => {
    const source = await Effect.runPromise(compiler().solidityVerifier(built.verification_key))
    expect(source).toContain("contract Groth16Verifier")
    expect(source).toContain("uint[10] calldata _pubSignals")
    expect(source).toContain(`uint256 constant IC10x = ${(built.verification_key as { IC: Array<Array<string>> }).IC[10]![0]};`)
  })

  it("refuses what is not a Groth16 bn128 key, and never pastes unchecked text into the source", async () => {
    const vk = built.verification_key as Record<string, unknown>
    for (const bad of [null, "x", { ...vk, curve: "bls12381" }, { ...vk, protocol: "plonk" }, { ...vk, nPublic: 3 },
      { ...vk, vk_alpha_1: ["1; } contract X { ", "2", "1"] }]) {
      const result = await run(compiler().solidityVerifier(bad))
      expect(Either.isLeft(result) && result.left.code, JSON.stringify(bad)?.slice(0, 60)).toBe("invalid_artifacts")
    }
  })
})

describe("upload checks", () => {
  it("find includes outside comments, with their lines", () => {
    expect(includesOf("// include \"a\";\n/* include \"b\"\n*/ include \"c\";\ninclude\"d\"; log(\"include\");")).toEqual([
      { target: "c", line: 3 },
      { target: "d", line: 4 }
    ])
  })

  it("read comments as circom does, even inside quotes, so no include hides behind a comment marker in a string", () => {
    // circom blanks `/* … */` here, leaving `include "A…"` and the second include, which must be refused.
    const hidden = "include \"A/*\"; // */\"; include \"../../../../etc/hostname\";"
    expect(includesOf(hidden).map((i) => i.target)).toContain("../../../../etc/hostname")
    expect(checkUpload("main.circom", { "main.circom": enc(hidden), "A": enc("") })).toMatchObject({ code: "include_outside_upload", line: 1 })
  })

  it("normalise upload paths and resolve includes against the including file", () => {
    const ok = checkUpload("./main.circom", {
      "./main.circom": enc("include \"sub/../lib/x.circom\";"),
      "lib/x.circom": enc("include \"circomlib/circuits/poseidon.circom\";")
    })
    expect("code" in ok ? ok : [...ok.files.keys()]).toEqual(["main.circom", "lib/x.circom"])
    expect(checkUpload("main.circom", { "a.circom": enc("") })).toMatchObject({ code: "compile_error" })
    expect(checkUpload("main.circom", { "main.circom": enc(""), "/etc/x": enc("") })).toMatchObject({ code: "include_outside_upload" })
    expect(checkUpload("main.circom", { "main.circom": enc(""), "a\\..\\..\\x": enc("") })).toMatchObject({ code: "include_outside_upload" })
    expect(checkUpload("main.circom", { "main.circom": enc("include \"C:/x\";") })).toMatchObject({ code: "include_outside_upload", line: 1 })
  })
})

describe("what an upload compiles: the files main reaches, its includes resolved as circom resolves them", () => {
  const files = (entries: Record<string, string>) => Object.fromEntries(Object.entries(entries).map(([path, text]) => [path, enc(text)]))
  const checked = (main: string, entries: Record<string, string>) => {
    const result = checkUpload(main, files(entries))
    if ("code" in result) throw new Error(`refused: ${result.message}`)
    return { files: [...result.files.keys()], ignored: result.ignored }
  }

  it("ignores files main never includes, whatever they hold: includes out of the upload, of nothing, or no circom at all", () => {
    expect(checked("main.circom", {
      "main.circom": "include \"lib/a.circom\";",
      "lib/a.circom": "include \"b.circom\";",
      "lib/b.circom": "include \"a.circom\"; // a cycle: circom reads each file once",
      "old/escape.circom": "include \"../../../etc/passwd\";",
      "old/missing.circom": "include \"gone.circom\";",
      "test/harness.circom": "include \"../lib/a.circom\"; component main = A();",
      "README": "not circom"
    })).toEqual({
      files: ["main.circom", "lib/a.circom", "lib/b.circom"],
      ignored: ["old/escape.circom", "old/missing.circom", "test/harness.circom", "README"]
    })
    // Once main reaches a file, its includes are checked like main's.
    expect(checkUpload("main.circom", files({ "main.circom": "include \"old/escape.circom\";", "old/escape.circom": "\n\ninclude \"../../x\";" })))
      .toMatchObject({ code: "include_outside_upload", file: "old/escape.circom", line: 3 })
  })

  it("an include names the including file's neighbour first, then circomlib; one that names neither fails at its file and line", () => {
    // An uploaded file shadows circomlib's of the same path, as circom takes the including file's folder first.
    expect(checked("main.circom", {
      "main.circom": "include \"circomlib/circuits/poseidon.circom\";",
      "circomlib/circuits/poseidon.circom": "// the account's own"
    }).files).toEqual(["main.circom", "circomlib/circuits/poseidon.circom"])
    expect(checked("main.circom", { "main.circom": "include \"circomlib/circuits/../circuits/comparators.circom\";" }).files).toEqual(["main.circom"])
    // From lib/, "util.circom" is lib/util.circom: the message names the path to upload it at.
    const missing = checkUpload("main.circom", files({ "main.circom": "include \"lib/x.circom\";", "lib/x.circom": "// x\n\ninclude \"util.circom\";" }))
    expect(missing).toMatchObject({ code: "compile_error", file: "lib/x.circom", line: 3 })
    expect("code" in missing && missing.message).toMatch(/lib\/util\.circom was not uploaded.*"sources" part whose filename is lib\/util\.circom/)
    // Not circomlib: a file circomlib lacks, or a path outside its circuits.
    for (const target of ["circomlib/circuits/nothere.circom", "circomlib/package.json", "comparators.circom"]) {
      expect(checkUpload("main.circom", files({ "main.circom": `include "${target}";` })), target).toMatchObject({ code: "compile_error", line: 1 })
    }
  })
})

/** A real Groth16 zkey on bls12-381: circom2 with --prime bls12381, a tiny bls12-381 ptau, snarkjs newZKey. */
async function bls12381Zkey(): Promise<Uint8Array> {
  const dir = join(work, "bls")
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, "m.circom"), "pragma circom 2.1.0;\ntemplate M() { signal input a; signal input b; signal output c; c <== a * b; }\ncomponent main = M();\n")
  const circom = spawnSync(process.execPath, [require.resolve("circom2/cli.js"), "m.circom", "--r1cs", "--prime", "bls12381", "-o", "."], {
    cwd: dir,
    encoding: "utf8"
  })
  expect(circom.status, circom.stdout + circom.stderr).toBe(0)
  const curve = await snarkjs.curves.getCurveFromName("bls12381")
  await snarkjs.powersOfTau.newAccumulator(curve, 3, join(dir, "0.ptau"))
  await snarkjs.powersOfTau.contribute(join(dir, "0.ptau"), join(dir, "1.ptau"), "t", "t")
  await snarkjs.powersOfTau.preparePhase2(join(dir, "1.ptau"), join(dir, "final.ptau"))
  await snarkjs.zKey.newZKey(join(dir, "m.r1cs"), join(dir, "final.ptau"), join(dir, "m.zkey"))
  await curve.terminate()
  return new Uint8Array(readFileSync(join(dir, "m.zkey")))
}
