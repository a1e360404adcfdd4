// The native engine end to end: every proof it makes (each circuit, many random valid inputs) is
// verified by snarkjs with the committed verification key; malformed keys and witnesses are
// refused with clear errors and never crash the process; the pool runs it (engine choice,
// MZK_PROVER_ENGINE, the start-up log line, timeouts); unloaded keys are freed; roots of unity agree
// with ffjavascript's.
// Where the addon is not built these tests are skipped (the suite then runs on snarkjs); where
// CI=true the addon must have loaded.
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { ArtifactsRepo, type Circuit, type Digest, Prover } from "@mzk/core"
import { loadNativeProver, type NativeLoad, type NativeProverAddon, type ZkeyHandle } from "@mzk/prover-native"
import { loadNativeTesting } from "@mzk/prover-native/testing"
import { buildPoseidon, type Poseidon } from "circomlibjs"
import { ConfigProvider, Effect, Either, Exit, Layer, Logger, Option } from "effect"
import { artifactsInMap } from "@mzk/testkit"
import fc from "fast-check"
import { createHash } from "node:crypto"
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { pathToFileURL } from "node:url"
import * as snarkjs from "snarkjs"
import { ArtifactFilesLive } from "../../src/artifacts/files.js"
import { buildFilesOf, builtinCircuit, FIELD_MODULUS } from "../../src/catalog.js"
import { chooseEngine, type ProverPoolOptions, ProverPoolLive } from "../../src/prove/pool.js"
import { timesOutThenProves } from "../fixtures/poolTimeout.js"

const native = loadNativeProver()
const addon: NativeProverAddon | undefined = native.ok ? native.addon : undefined
// The arithmetic's test entry points ("root") are in the test addon, built beside the production one.
const testing = native.ok ? loadNativeTesting() : undefined
const testOps = testing?.ok ? testing.addon : undefined

const fromSnarkjs = createRequire(createRequire(import.meta.url).resolve("snarkjs"))
const esm = (name: string) => import(pathToFileURL(join(dirname(fromSnarkjs.resolve(name)), "..", "main.js")).href)
type Calculator = { calculateWTNSBin: (inputs: unknown, sanityCheck: number) => Promise<Uint8Array> }

const CIRCUITS = ["multiplier", "range", "hash_preimage", "merkle_membership"] as const
type CircuitName = (typeof CIRCUITS)[number]
const vkeyOf = (circuit: string) => JSON.parse(readFileSync(buildFilesOf(circuit).vkey, "utf8")) as unknown
const zkeyBytes = (circuit: string) => new Uint8Array(readFileSync(buildFilesOf(circuit).zkey))
const builtin = (name: string) => Option.getOrThrow(builtinCircuit(name))

// Artifacts that are not built-in come from this store (a Map: the port's contract is all a
// prover needs), cached in a fresh directory per file.
const stored = new Map<string, Uint8Array>()
const put = (bytes: Uint8Array) => {
  const digest = createHash("sha256").update(bytes).digest("hex") as Digest
  stored.set(digest, bytes)
  return digest
}
const cacheDir = mkdtempSync(join(tmpdir(), "mzk-native-cache-"))
const ArtifactsInMemory = Layer.succeed(ArtifactsRepo, artifactsInMap(stored))
const pool = (options: ProverPoolOptions) =>
  ProverPoolLive(options).pipe(Layer.provide(ArtifactFilesLive({ cacheDir })), Layer.provide(ArtifactsInMemory))

let poseidon: Poseidon
const calculators = new Map<string, Calculator>()
const handles = new Map<string, ZkeyHandle>()
const witnesses = new Map<string, Uint8Array>()

beforeAll(async () => {
  poseidon = await buildPoseidon()
  const { WitnessCalculatorBuilder } = (await esm("circom_runtime")) as {
    WitnessCalculatorBuilder: (wasm: Uint8Array) => Promise<Calculator>
  }
  for (const circuit of CIRCUITS) calculators.set(circuit, await WitnessCalculatorBuilder(readFileSync(buildFilesOf(circuit).wasm)))
  if (addon !== undefined) for (const circuit of CIRCUITS) handles.set(circuit, addon.loadZkey(zkeyBytes(circuit), { threads: 2 }))
  witnesses.set("multiplier", await calculators.get("multiplier")!.calculateWTNSBin({ a: "3", b: "11" }, 0))
  witnesses.set("range", await calculators.get("range")!.calculateWTNSBin({ value: "5", min: "1", max: "9" }, 0))
})
afterAll(async () => {
  rmSync(cacheDir, { recursive: true, force: true })
  await (globalThis as { curve_bn128?: { terminate(): Promise<void> } | null }).curve_bn128?.terminate()
})

const hash = (xs: ReadonlyArray<bigint>) => poseidon.F.toObject(poseidon(xs))

// Random valid inputs per circuit, with the public signals they must produce.
const field = fc.bigInt({ min: 0n, max: FIELD_MODULUS - 1n })
const u64 = fc.bigInt({ min: 0n, max: (1n << 64n) - 1n })
interface Case {
  readonly inputs: Record<string, string | ReadonlyArray<string>>
  readonly publicSignals: () => ReadonlyArray<string>
}
const cases: Record<CircuitName, fc.Arbitrary<Case>> = {
  multiplier: fc.tuple(field.filter((x) => x !== 1n), field.filter((x) => x !== 1n)).map(([a, b]) => ({
    inputs: { a: a.toString(), b: b.toString() },
    publicSignals: () => [((a * b) % FIELD_MODULUS).toString()]
  })),
  range: fc.tuple(u64, u64, u64).map((xs) => {
    const [min, value, max] = [...xs].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0))
    return { inputs: { value: value!.toString(), min: min!.toString(), max: max!.toString() }, publicSignals: () => [min!.toString(), max!.toString()] }
  }),
  hash_preimage: field.map((preimage) => ({
    inputs: { preimage: preimage.toString(), hash: "" },
    publicSignals: () => [hash([preimage]).toString()]
  })),
  merkle_membership: fc.tuple(field, fc.array(field, { minLength: 20, maxLength: 20 }), fc.array(fc.boolean(), { minLength: 20, maxLength: 20 })).map(
    ([secret, siblings, bits]) => ({
      inputs: { secret: secret.toString(), path_elements: siblings.map(String), path_indices: bits.map((b) => (b ? "1" : "0")), root: "" },
      publicSignals: () => {
        let node = hash([secret])
        siblings.forEach((sibling, i) => (node = bits[i] ? hash([sibling, node]) : hash([node, sibling])))
        return [node.toString()]
      }
    })
  )
}
/** Fills in the inputs that are hashes (only known once Poseidon is built). */
const complete = (circuit: CircuitName, c: Case) => {
  const signals = c.publicSignals()
  if (circuit === "hash_preimage") return { inputs: { ...c.inputs, hash: signals[0]! }, signals }
  if (circuit === "merkle_membership") return { inputs: { ...c.inputs, root: signals[0]! }, signals }
  return { inputs: c.inputs, signals }
}
const RUNS: Record<CircuitName, number> = { multiplier: 25, range: 25, hash_preimage: 20, merkle_membership: 8 }

describe("native prover availability", () => {
  it("loads where the build ran (required where CI=true)", () => {
    if (process.env.CI === "true") expect(native.ok ? "loaded" : native.reason).toBe("loaded")
    if (!native.ok) console.warn(`native prover tests skipped (the suite runs on snarkjs): ${native.reason}`)
  })

  it("engine choice: auto falls back to snarkjs with the reason, native without the addon is an error", () => {
    const missing: NativeLoad = { ok: false, reason: "not built" }
    expect(chooseEngine("auto", missing)).toEqual(Either.right({ engine: "snarkjs", why: "native prover unavailable: not built" }))
    expect(chooseEngine("snarkjs", missing)).toEqual(Either.right({ engine: "snarkjs", why: "requested" }))
    expect(Either.getLeft(chooseEngine("native", missing))._tag).toBe("Some")
    const loaded = { ok: true, addon: { kernel: "adx" } } as unknown as NativeLoad
    expect(chooseEngine("auto", loaded)).toEqual(Either.right({ engine: "native", kernel: "adx", why: "addon loaded" }))
    expect(chooseEngine("snarkjs", loaded)).toEqual(Either.right({ engine: "snarkjs", why: "requested" }))
  })
})

describe.skipIf(addon === undefined)("native prover", () => {
  for (const circuit of CIRCUITS) {
    it(`${circuit}: proofs for random valid inputs verify with snarkjs and carry the right public signals`, async () => {
      const vkey = vkeyOf(circuit)
      await fc.assert(
        fc.asyncProperty(cases[circuit], fc.integer({ min: 1, max: 3 }), async (c, threads) => {
          const { inputs, signals } = complete(circuit, c)
          const wtns = await calculators.get(circuit)!.calculateWTNSBin(inputs, 0)
          const out = addon!.prove(handles.get(circuit)!, wtns, { threads })
          expect(out.publicSignals).toEqual(signals)
          expect(out.proof).toMatchObject({ protocol: "groth16", curve: "bn128" })
          expect(out.proof.pi_a[2]).toBe("1")
          expect(await snarkjs.groth16.verify(vkey, out.publicSignals, out.proof)).toBe(true)
        }),
        { numRuns: RUNS[circuit] }
      )
    }, 120_000)
  }

  it("two proofs of one witness differ in pi_a, pi_b and pi_c (fresh r and s) and both verify; the portable kernel's proofs verify too", async () => {
    const wtns = witnesses.get("multiplier")!
    const first = addon!.prove(handles.get("multiplier")!, wtns)
    const second = await addon!.proveAsync(handles.get("multiplier")!, wtns, { threads: 2 })
    // pi_a carries r, pi_b carries s, pi_c both: a fixed one of them shows in one of these.
    expect(first.proof.pi_a).not.toEqual(second.proof.pi_a)
    expect(first.proof.pi_b).not.toEqual(second.proof.pi_b)
    expect(first.proof.pi_c).not.toEqual(second.proof.pi_c)
    const vkey = vkeyOf("multiplier")
    for (const out of [first, second]) expect(await snarkjs.groth16.verify(vkey, out.publicSignals, out.proof)).toBe(true)
    for (const kernel of addon!.kernels) {
      for (const circuit of ["range", "multiplier"] as const) {
        const handle = addon!.loadZkey(zkeyBytes(circuit), { kernel })
        const out = addon!.prove(handle, witnesses.get(circuit)!)
        expect(await snarkjs.groth16.verify(vkeyOf(circuit), out.publicSignals, out.proof), `${kernel} ${circuit}`).toBe(true)
      }
    }
  })

  it("every table layout proves the same statement: no precomputed copies, a few, small digits", async () => {
    const bytes = zkeyBytes("range")
    for (const layout of [{ forceCopies: 1 }, { forceCopies: 3, forceC: 7 }, { forceC: 4 }, { tableBudgetMB: 0 }]) {
      const handle = addon!.loadZkey(bytes, { ...layout, cache: false })
      const out = addon!.prove(handle, witnesses.get("range")!, { threads: 2 })
      expect(await snarkjs.groth16.verify(vkeyOf("range"), out.publicSignals, out.proof), JSON.stringify(layout)).toBe(true)
    }
  })

  it("a thread's helpers serve proofs of any width in turn, and async proofs at once: every proof verifies", async () => {
    const handle = handles.get("range")!
    const wtns = witnesses.get("range")!
    // Widths up and down on this thread (its helpers are kept between proofs and phases) …
    const inTurn = [4, 2, 8, 1, 3, 8].map((threads) => addon!.prove(handle, wtns, { threads }))
    // … and on libuv's threads, several proofs at once, each with helpers of its own.
    const atOnce = await Promise.all([3, 5, 2, 4].map((threads) => addon!.proveAsync(handle, wtns, { threads })))
    for (const out of [...inTurn, ...atOnce]) expect(await snarkjs.groth16.verify(vkeyOf("range"), out.publicSignals, out.proof)).toBe(true)
  })

  it("sha256 agrees with node:crypto on random bytes (every padding case) and on a megabyte", () => {
    const nodeSha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex")
    // Both ways: the CPU's SHA extensions where it has them, and the portable rounds.
    for (const portable of [false, true]) {
      fc.assert(fc.property(fc.uint8Array({ minLength: 0, maxLength: 300 }), (b) => addon!.sha256(b, portable) === nodeSha(b)), { numRuns: 300 })
      const big = new Uint8Array(1 << 20).map((_, i) => (i * 2654435761) >>> 24)
      expect(addon!.sha256(big, portable)).toBe(nodeSha(big))
    }
  })

  it("loadZkeyFile: a key read from its file by digest proves; a changed byte or a wrong digest is refused; a loaded key is shared without reading", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mzk-zkeyfile-"))
    try {
      const bytes = zkeyBytes("range")
      const digest = createHash("sha256").update(bytes).digest("hex")
      const path = join(dir, "range.zkey")
      writeFileSync(path, bytes)
      const code = (f: () => unknown) => {
        try {
          f()
          return "loaded"
        } catch (error) {
          return (error as { code?: string }).code
        }
      }
      // Checked against the digest before it is parsed: a flipped byte of the file, or another key's digest.
      const changed = join(dir, "changed.zkey")
      writeFileSync(changed, bytes.map((b, i) => (i === bytes.length - 7 ? b ^ 1 : b)))
      expect(code(() => addon!.loadZkeyFile(changed, { sha256: digest }))).toBe("MZK_DIGEST_MISMATCH")
      expect(code(() => addon!.loadZkeyFile(path, { sha256: "0".repeat(64) }))).toBe("MZK_DIGEST_MISMATCH")
      expect(code(() => addon!.loadZkeyFile(join(dir, "absent.zkey"), { sha256: digest }))).toBe("MZK_IO")
      expect(code(() => addon!.loadZkeyFile(path, { sha256: digest.toUpperCase() }))).toBe("MZK_INVALID_INPUT")

      const handle = addon!.loadZkeyFile(path, { sha256: digest, threads: 2 })
      const out = addon!.prove(handle, witnesses.get("range")!, { threads: 2 })
      expect(await snarkjs.groth16.verify(vkeyOf("range"), out.publicSignals, out.proof)).toBe(true)
      // While one handle holds the key, the same digest is served from memory: the file is not read.
      rmSync(path)
      const shared = addon!.loadZkeyFile(path, { sha256: digest })
      expect(addon!.zkeyInfo(shared)).toEqual(addon!.zkeyInfo(handle))
      addon!.unloadZkey(handle)
      addon!.unloadZkey(shared)
      // Once nobody holds it, loading means reading the file again.
      expect(code(() => addon!.loadZkeyFile(path, { sha256: digest }))).toBe("MZK_IO")
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it("roots of unity agree with ffjavascript's bn128 Fr.w[k] for every k", async () => {
    const { buildBn128 } = (await esm("ffjavascript")) as {
      buildBn128: (singleThread: boolean) => Promise<{ Fr: { w: Array<unknown>; toObject(x: unknown): bigint }; terminate(): Promise<void> }>
    }
    const curve = await buildBn128(true)
    try {
      for (let k = 0; k <= 28; k++) {
        const bytes = testOps!.test("root", [], [k])
        let v = 0n
        for (let i = 31; i >= 0; i--) v = (v << 8n) | BigInt(bytes[i]!)
        expect(v, `w[${k}]`).toBe(curve.Fr.toObject(curve.Fr.w[k]))
      }
    } finally {
      await curve.terminate()
    }
  })
})

// --- Malformed inputs: clear errors, never a crash -------------------------------------------

/** Sections of an iden3 binary file: type → [offset of the data, size]. */
const sectionsOf = (b: Uint8Array) => {
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength)
  const out = new Map<number, [number, number]>()
  let pos = 12
  for (let i = 0; i < view.getUint32(8, true); i++) {
    const type = view.getUint32(pos, true)
    const size = Number(view.getBigUint64(pos + 4, true))
    out.set(type, [pos + 12, size])
    pos += 12 + size
  }
  return out
}
const patched = (b: Uint8Array, edit: (copy: Uint8Array, view: DataView) => void) => {
  const copy = new Uint8Array(b)
  edit(copy, new DataView(copy.buffer))
  return copy
}

describe.skipIf(addon === undefined)("native prover: malformed inputs", () => {
  const invalid = (f: () => unknown, message: RegExp) => {
    let error: unknown
    try {
      f()
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(Error)
    expect((error as Error).message).toMatch(message)
    expect((error as { code?: string }).code).toBe("MZK_INVALID_INPUT")
  }

  it("truncated, corrupt and non-bn128 zkeys are refused with a reason", () => {
    const good = zkeyBytes("multiplier")
    const sections = sectionsOf(good)
    const load = (bytes: Uint8Array) => () => addon!.loadZkey(bytes, { cache: false })
    invalid(load(new Uint8Array(0)), /truncated/)
    invalid(load(good.slice(0, 11)), /truncated/)
    for (const cut of [12, 20, 100, good.length >> 1, good.length - 1]) invalid(load(good.slice(0, cut)), /truncated|claims|missing section/)
    invalid(load(patched(good, (c) => c.set([0x72, 0x31, 0x63, 0x73], 0))), /not a zkey file/)
    const [header] = sections.get(1)!
    invalid(load(patched(good, (_, v) => v.setUint32(header, 2, true))), /not a Groth16 key/)
    const [groth] = sections.get(2)!
    // A BLS12-381 key has 48-byte base field elements; any other prime is not bn128 either.
    invalid(load(patched(good, (_, v) => v.setUint32(groth, 48, true))), /not a bn128 key/)
    invalid(load(patched(good, (c) => (c[groth + 4] = c[groth + 4]! ^ 1))), /not a bn128 key/)
    invalid(load(patched(good, (c) => (c[groth + 40] = c[groth + 40]! ^ 1))), /not a bn128 key/)
    // nVars one larger than the sections hold.
    invalid(load(patched(good, (_, v) => v.setUint32(groth + 72, v.getUint32(groth + 72, true) + 1, true))), /section \d+ .* bytes, expected/)
    // A verification key point, a base and a coefficient corrupted.
    invalid(load(patched(good, (c) => (c[groth + 84] = c[groth + 84]! ^ 0x55))), /not on the curve/)
    // G2 points: a byte of δ₂ (the header's last point) and of the first B2 point that is not at infinity.
    const delta2 = groth + 4 + 32 + 4 + 32 + 12 + 64 + 64 + 128 + 128 + 64
    invalid(load(patched(good, (c) => (c[delta2 + 7] = c[delta2 + 7]! ^ 0x20))), /verification key point of the header is not on the curve/)
    const [b2, b2Size] = sections.get(7)!
    const firstB2 = (() => {
      for (let o = b2; o < b2 + b2Size; o += 128) if (good.slice(o, o + 128).some((x) => x !== 0)) return o
      return b2
    })()
    invalid(load(patched(good, (c) => (c[firstB2 + 7] = c[firstB2 + 7]! ^ 0x20))), /section 7 \(B2 points\) is not on the curve/)
    invalid(load(patched(good, (c) => (c[firstB2 + 64 + 40] = c[firstB2 + 64 + 40]! ^ 0x01))), /section 7 \(B2 points\) is not on the curve/)
    const [a] = sections.get(5)!
    const firstPoint = (() => {
      for (let o = a; o < a + sections.get(5)![1]; o += 64) if (good.slice(o, o + 64).some((x) => x !== 0)) return o
      return a
    })()
    invalid(load(patched(good, (c) => (c[firstPoint + 3] = c[firstPoint + 3]! ^ 0x10))), /section 5 .* not on the curve/)
    invalid(load(patched(good, (c) => c.fill(0xff, firstPoint, firstPoint + 32))), /not on the curve or not canonical/)
    const [coefs] = sections.get(4)!
    invalid(load(patched(good, (_, v) => v.setUint32(coefs + 4 + 8, 1_000_000, true))), /coefficient 0 is out of range/)
    // A section twice.
    const [icAt, icSize] = sections.get(3)!
    const twice = new Uint8Array(good.length + 12 + icSize)
    twice.set(good)
    twice.set(good.slice(icAt - 12, icAt + icSize), good.length)
    new DataView(twice.buffer).setUint32(8, sections.size + 1, true)
    invalid(load(twice), /section 3 .* appears twice/)
    // Not bytes at all.
    expect(() => addon!.loadZkey("zkey" as unknown as Uint8Array)).toThrow(/must be a Uint8Array/)
  })

  it("witnesses of the wrong length, for another circuit or field, truncated or corrupt are refused", () => {
    const handle = handles.get("range")!
    const good = witnesses.get("range")!
    const prove = (w: Uint8Array) => () => addon!.prove(handle, w)
    invalid(prove(witnesses.get("multiplier")!), /6 values for a circuit of 319/)
    invalid(prove(new Uint8Array(0)), /truncated/)
    invalid(prove(good.slice(0, good.length - 7)), /claims|truncated|bytes, expected/)
    invalid(prove(patched(good, (c) => c.set([0x7a, 0x6b, 0x65, 0x79], 0))), /not a wtns file/)
    const [head] = sectionsOf(good).get(1)!
    invalid(prove(patched(good, (c) => (c[head + 4] = c[head + 4]! ^ 1))), /not BN254's scalar field/)
    const [values] = sectionsOf(good).get(2)!
    invalid(prove(patched(good, (c) => (c[values] = 2))), /value 0 must be 1/)
    invalid(prove(patched(good, (c) => c.fill(0xff, values + 32, values + 64))), /value 1 is not below the field prime/)
    expect(() => addon!.prove({} as ZkeyHandle, good)).toThrow(/expected a zkey handle/)
    expect(() => addon!.prove(handle, good, { threads: 0 })).toThrow(/threads out of range/)
    expect(() => addon!.prove(handle, good, { cancel: new Int32Array(0) })).toThrow(/cancel must be an Int32Array/)
    // Still alive and proving.
    expect(addon!.prove(handle, good).publicSignals).toEqual(["1", "9"])
  })

  it("a set cancel flag stops the proof with MZK_CANCELLED", async () => {
    const flag = new Int32Array(new SharedArrayBuffer(4))
    flag[0] = 1
    expect(() => addon!.prove(handles.get("range")!, witnesses.get("range")!, { cancel: flag })).toThrow(
      expect.objectContaining({ code: "MZK_CANCELLED" })
    )
    await expect(addon!.proveAsync(handles.get("range")!, witnesses.get("range")!, { cancel: flag })).rejects.toMatchObject({ code: "MZK_CANCELLED" })
  })

  it("a corrupt uploaded zkey fails its proofs with the parser's reason; the pool goes on", async () => {
    const multiplier = builtin("multiplier")
    const corrupt: Circuit = {
      ...multiplier,
      owner: "acc_corrupt" as Circuit["owner"],
      artifacts: { ...multiplier.artifacts!, zkey: put(zkeyBytes("multiplier").subarray(0, 1000)) }
    }
    const [failure, out] = await Effect.runPromise(
      Effect.gen(function*() {
        const prover = yield* Prover
        const failure = yield* Effect.flip(prover.prove(corrupt, { a: "3", b: "11" }))
        const out = yield* prover.prove(multiplier, { a: "3", b: "11" })
        expect(yield* prover.verify(multiplier, out.proof, out.public_signals)).toBe(true)
        return [failure, out] as const
      }).pipe(Effect.provide(pool({ engine: "native", poolSize: 1, preload: [] })))
    )
    expect(failure).toMatchObject({ _tag: "ProverFailure", code: "internal" })
    expect(failure.message).toMatch(/zkey: section \d+ claims \d+ bytes but only \d+ remain/)
    expect(await snarkjs.groth16.verify(vkeyOf("multiplier"), out.public_signals, out.proof)).toBe(true)
  })
})

describe.skipIf(addon === undefined)("native prover: unloading keys", () => {
  it("unloadZkey frees a key nobody else holds at once; the handle is refused afterwards", async () => {
    const before = addon!.memoryStats()
    // An unshared copy with tables, so its memory is this handle's alone.
    const handle = addon!.loadZkey(zkeyBytes("range"), { cache: false, threads: 2 })
    const { tableBytes } = addon!.zkeyInfo(handle)
    expect(tableBytes).toBeGreaterThan(0)
    expect(addon!.memoryStats()).toEqual({
      zkeys: before.zkeys + 1,
      tableBytes: before.tableBytes + tableBytes,
      tableBytesMapped: before.tableBytesMapped,
      tableBytesBuilt: before.tableBytesBuilt + tableBytes
    })
    const out = addon!.prove(handle, witnesses.get("range")!)
    expect(await snarkjs.groth16.verify(vkeyOf("range"), out.publicSignals, out.proof)).toBe(true)
    addon!.unloadZkey(handle)
    expect(addon!.memoryStats()).toEqual(before)
    expect(() => addon!.prove(handle, witnesses.get("range")!)).toThrow(expect.objectContaining({ code: "MZK_INVALID_INPUT", message: "the zkey handle was unloaded" }))
    expect(() => addon!.zkeyInfo(handle)).toThrow(/unloaded/)
    expect(() => addon!.proveAsync(handle, witnesses.get("range")!)).toThrow(/unloaded/)
    // Unloading twice is harmless.
    addon!.unloadZkey(handle)
    expect(() => addon!.unloadZkey({} as ZkeyHandle)).toThrow(/expected a zkey handle/)
  })

  it("a shared key (same cacheKey) lives until its last handle is unloaded; a proof in flight keeps it alive", async () => {
    const before = addon!.memoryStats()
    const cacheKey = `test-${Math.random()}`
    const first = addon!.loadZkey(zkeyBytes("multiplier"), { cacheKey })
    const second = addon!.loadZkey(zkeyBytes("multiplier"), { cacheKey })
    expect(addon!.memoryStats().zkeys).toBe(before.zkeys + 1)
    const pending = addon!.proveAsync(first, witnesses.get("multiplier")!)
    addon!.unloadZkey(first)
    addon!.unloadZkey(second)
    const out = await pending
    expect(await snarkjs.groth16.verify(vkeyOf("multiplier"), out.publicSignals, out.proof)).toBe(true)
    // The async proof's hold is released when it settles.
    expect(addon!.memoryStats()).toEqual(before)
    // A cacheKey names the bytes: after every holder let go, the same name loads afresh.
    const again = addon!.loadZkey(zkeyBytes("multiplier"), { cacheKey })
    expect(addon!.memoryStats().zkeys).toBe(before.zkeys + 1)
    const proof = addon!.prove(again, witnesses.get("multiplier")!)
    expect(await snarkjs.groth16.verify(vkeyOf("multiplier"), proof.publicSignals, proof.proof)).toBe(true)
    addon!.unloadZkey(again)
    expect(addon!.memoryStats()).toEqual(before)
    expect(() => addon!.loadZkey(zkeyBytes("multiplier"), { cacheKey: "" })).toThrow(/cacheKey must not be empty/)
  })
})

// --- The pool on the native engine ------------------------------------------------------------

/** Builds the layer, collecting what it logs. */
const logged = (logs: Array<string>) =>
  Logger.replace(Logger.defaultLogger, Logger.make(({ message }) => logs.push(Array.isArray(message) ? message.join(" ") : String(message))))

describe.skipIf(addon === undefined)("the pool on the native engine", () => {
  it.live("proves every circuit (proofs verify with snarkjs and with the pool), logs its engine, and times out cleanly", () =>
    Effect.gen(function*() {
      const logs: Array<string> = []
      yield* Effect.gen(function*() {
        const prover = yield* Prover
        expect(prover.capacity).toBe(2)
        const { inputs, signals } = complete("merkle_membership", fc.sample(cases.merkle_membership, { numRuns: 1, seed: 7 })[0]!)
        const outs = yield* Effect.all([
          prover.prove(builtin("merkle_membership"), inputs),
          prover.prove(builtin("multiplier"), { a: "6", b: "7" }),
          prover.prove(builtin("multiplier"), { a: "6", b: "7" })
        ], { concurrency: "unbounded" })
        expect(outs[0].public_signals).toEqual(signals)
        expect(outs[1].proof).not.toEqual(outs[2].proof)
        for (const [i, circuit] of ["merkle_membership", "multiplier", "multiplier"].entries()) {
          expect(yield* Effect.promise(() => snarkjs.groth16.verify(vkeyOf(circuit), outs[i]!.public_signals, outs[i]!.proof))).toBe(true)
          expect(yield* prover.verify(builtin(circuit), outs[i]!.proof, outs[i]!.public_signals)).toBe(true)
        }
      }).pipe(Effect.provide(pool({ engine: "native", poolSize: 2, preload: ["multiplier", "merkle_membership"] }).pipe(Layer.provide(logged(logs)))))
      expect(logs.join("\n")).toMatch(/prover engine: native \(2 threads: 2 proofs at once × 1 each, (adx|generic) kernel, low priority; requested\)/)
    }), 120_000)

  it.live("keeps the tables of the circuits it preloads on disk, in a cache folder it makes, so the next start maps them instead of building them", () =>
    Effect.gen(function*() {
      // A server's first start: its cache folder (./data/cache by default) does not exist yet.
      const fresh = join(cacheDir, "first-start", "cache")
      const start = Effect.scoped(Layer.build(
        ProverPoolLive({ engine: "native", poolSize: 1, preload: ["merkle_membership"] }).pipe(
          Layer.provide(ArtifactFilesLive({ cacheDir: fresh })),
          Layer.provide(ArtifactsInMemory)
        )
      ))
      yield* start
      const digest = createHash("sha256").update(zkeyBytes("merkle_membership")).digest("hex")
      const tables = readdirSync(join(fresh, "tables")).filter((name) => name.startsWith(digest))
      expect(tables).toHaveLength(1)
      // A table file is written beside its name and renamed into place: a new file is a new inode.
      const written = statSync(join(fresh, "tables", tables[0]!)).ino
      yield* start
      expect(readdirSync(join(fresh, "tables")).filter((name) => name.startsWith(digest))).toEqual(tables)
      expect(statSync(join(fresh, "tables", tables[0]!)).ino, "mapped, not written again").toBe(written)
    }), 60_000)

  it.scoped("a proof past the timeout fails with timeout; its thread is cancelled and replaced and the pool goes on", () =>
    Effect.gen(function*() {
      const { inputs } = complete("merkle_membership", fc.sample(cases.merkle_membership, { numRuns: 1, seed: 8 })[0]!)
      yield* timesOutThenProves(inputs)
    }).pipe(Effect.provide(pool({ engine: "native", poolSize: 1, timeout: "5 seconds", preload: ["multiplier", "merkle_membership"] }))), 60_000)

  it.live("MZK_PROVER_ENGINE picks the engine when the option does not, and a bad value stops the start", () =>
    Effect.gen(function*() {
      const logs: Array<string> = []
      const start = (engine: string) =>
        Effect.scoped(Layer.build(pool({ poolSize: 1, preload: ["multiplier"] }))).pipe(
          Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["MZK_PROVER_ENGINE", engine]]))),
          Effect.provide(logged(logs)),
          Effect.exit
        )
      expect(Exit.isSuccess(yield* start("snarkjs"))).toBe(true)
      expect(logs.join("\n")).toContain("prover engine: snarkjs (1 threads; requested)")
      expect(Exit.isSuccess(yield* start("native"))).toBe(true)
      expect(logs.join("\n")).toMatch(/prover engine: native \(\d+ threads: 1 proofs at once/)
      const bad = yield* start("fast")
      expect(JSON.stringify(bad)).toMatch(/MZK_PROVER_ENGINE: Expected one of \(auto, native, snarkjs\).*ProverStartupError/)
    }), 60_000)
})

describe("fresh randomness in every proof, on each engine", () => {
  for (const engine of ["snarkjs", ...(addon === undefined ? [] : ["native" as const])] as const) {
    it.live(`${engine}: two proofs of one witness through the pool differ in pi_a, pi_b and pi_c, and both verify`, () =>
      Effect.gen(function*() {
        const prover = yield* Prover
        const first = yield* prover.prove(builtin("multiplier"), { a: "3", b: "11" })
        const second = yield* prover.prove(builtin("multiplier"), { a: "3", b: "11" })
        expect(second.public_signals).toEqual(first.public_signals)
        expect(second.proof.pi_a).not.toEqual(first.proof.pi_a)
        expect(second.proof.pi_b).not.toEqual(first.proof.pi_b)
        expect(second.proof.pi_c).not.toEqual(first.proof.pi_c)
        for (const out of [first, second]) {
          expect(yield* Effect.promise(() => snarkjs.groth16.verify(vkeyOf("multiplier"), out.public_signals, out.proof))).toBe(true)
        }
      }).pipe(Effect.provide(pool({ engine, poolSize: 1, preload: ["multiplier"] }))), 60_000)
  }
})
