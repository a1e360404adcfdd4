// The native development setup (setupDevelopment): keys for several small circuits, written as
// .r1cs files here (r1csFixture.ts), must prove with the native prover and with snarkjs, the proofs
// must verify with snarkjs against the key's own verification key, a tampered public signal must
// not, two setups must differ, `snarkjs zkey verify` must accept the key against the ptau of the
// same toxic waste, and malformed r1cs files must be refused naming the problem.
import { describe, expect, it } from "@effect/vitest"
import { loadNativeProver } from "@mzk/prover-native"
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { pathToFileURL } from "node:url"
import * as snarkjs from "snarkjs"
import { afterAll, beforeAll } from "vitest"
import { binFile, buildCircuit, type Circuit, section, u32, u64 } from "./r1csFixture.js"
import { concat, le } from "./reference.js"

const native = loadNativeProver()
const addon = native.ok ? native.addon : undefined

interface Bn128 {
  readonly G2: {
    fromRng(rng: unknown): Uint8Array
    toAffine(p: Uint8Array): Uint8Array
    toRprLEM(buff: Uint8Array, offset: number, p: Uint8Array): void
  }
  terminate(): Promise<void>
}
interface Ffjavascript {
  readonly ChaCha: new (seed: ReadonlyArray<number>) => unknown
  getCurveFromName(name: string, options?: { singleThread?: boolean }): Promise<Bn128>
}

/** snarkjs's own ffjavascript (the module its zkey verify uses), resolved through snarkjs. */
const ffjavascript = (): Promise<Ffjavascript> => {
  const fromSnarkjs = createRequire(createRequire(import.meta.url).resolve("snarkjs"))
  return import(pathToFileURL(join(dirname(fromSnarkjs.resolve("ffjavascript")), "..", "main.js")).href) as Promise<Ffjavascript>
}

describe.skipIf(addon === undefined)("setupDevelopment", () => {
  let dir = ""
  let curve: Bn128
  let ff: Ffjavascript
  /** snarkjs's hashToG2: the transcript's first 32 bytes as eight big-endian words seed ChaCha, G2.fromRng. */
  const hashToG2 = (transcript: Uint8Array) => {
    const view = new DataView(transcript.buffer, transcript.byteOffset, transcript.byteLength)
    const rng = new ff.ChaCha(Array.from({ length: 8 }, (_, i) => view.getUint32(i * 4)))
    const out = new Uint8Array(128)
    curve.G2.toRprLEM(out, 0, curve.G2.toAffine(curve.G2.fromRng(rng)))
    return out
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "mzk-setup-"))
    ff = await ffjavascript()
    curve = await ff.getCurveFromName("bn128", { singleThread: true })
  })
  afterAll(async () => {
    await curve?.terminate()
    rmSync(dir, { recursive: true, force: true })
  })

  let count = 0
  const setUp = (
    circuit: Circuit,
    seed: number,
    options: { ptau?: boolean; kernel?: string; threads?: number; hashToG2?: (t: Uint8Array) => Uint8Array; droppedInputs?: number } = {}
  ) => {
    const built = buildCircuit(circuit, seed, options.droppedInputs === undefined ? {} : { droppedInputs: options.droppedInputs })
    const base = join(dir, `c${count++}`)
    writeFileSync(`${base}.r1cs`, built.r1cs)
    writeFileSync(`${base}.wtns`, built.wtns)
    const result = addon!.setupDevelopment(`${base}.r1cs`, `${base}.zkey`, {
      hashToG2: options.hashToG2 ?? hashToG2,
      threads: options.threads ?? 2,
      ...(options.kernel === undefined ? {} : { kernel: options.kernel }),
      ...(options.ptau === true ? { ptauPath: `${base}.ptau` } : {})
    })
    return { built, base, result }
  }

  const refusal = (r1cs: Uint8Array) => {
    const file = join(dir, `bad${count++}.r1cs`)
    writeFileSync(file, r1cs)
    try {
      addon!.setupDevelopment(file, `${file}.zkey`, { hashToG2 })
    } catch (e) {
      expect((e as { code?: string }).code).toBe("MZK_INVALID_INPUT")
      return (e as Error).message
    }
    throw new Error("the r1cs was accepted")
  }

  const shapes: ReadonlyArray<Circuit> = [
    { nOut: 1, nPubIn: 0, nPrvIn: 2, nMul: 1 },
    { nOut: 1, nPubIn: 2, nPrvIn: 3, nMul: 40 },
    { nOut: 3, nPubIn: 1, nPrvIn: 5, nMul: 300 },
    { nOut: 0, nPubIn: 4, nPrvIn: 0, nMul: 17 },
    // More points per section than one chunk of the batched multiplication (1,024): both threads busy.
    { nOut: 2, nPubIn: 3, nPrvIn: 4, nMul: 1500 }
  ]

  for (const kernel of addon?.kernels ?? []) {
    it(`kernel ${kernel}: proofs by the native prover and by snarkjs verify with the key's own verification key; a tampered signal does not`, async () => {
      for (const [i, shape] of shapes.entries()) {
        const { base, built, result } = setUp(shape, 100 + i, { kernel })
        expect(result.nVars).toBe(built.nWires)
        expect(result.nConstraints).toBe(built.nConstraints)
        expect(result.domainSize).toBeGreaterThan(built.nConstraints + shape.nOut + shape.nPubIn)
        const vkey = await snarkjs.zKey.exportVerificationKey(`${base}.zkey`)
        const zkeyBytes = readFileSync(`${base}.zkey`)
        expect(addon!.checkZkeyPoints(zkeyBytes)).toBeTruthy()
        const handle = addon!.loadZkey(zkeyBytes)
        try {
          const nativeProof = addon!.prove(handle, built.wtns)
          expect(nativeProof.publicSignals).toEqual(built.publicSignals)
          expect(await snarkjs.groth16.verify(vkey, nativeProof.publicSignals, nativeProof.proof)).toBe(true)
          const js = await snarkjs.groth16.prove(`${base}.zkey`, `${base}.wtns`)
          expect(js.publicSignals).toEqual(built.publicSignals)
          expect(await snarkjs.groth16.verify(vkey, js.publicSignals, js.proof)).toBe(true)
          if (built.publicSignals.length > 0) {
            const tampered = [...built.publicSignals]
            tampered[0] = String(BigInt(tampered[0]!) + 1n)
            expect(await snarkjs.groth16.verify(vkey, tampered, nativeProof.proof)).toBe(false)
            expect(await snarkjs.groth16.verify(vkey, tampered, js.proof)).toBe(false)
          }
        } finally {
          addon!.unloadZkey(handle)
        }
      }
    }, 120_000)
  }

  it("snarkjs zkey verify accepts the key against the ptau of the same toxic waste", async () => {
    for (const [i, shape] of [shapes[1]!, shapes[2]!].entries()) {
      const { base, result } = setUp(shape, 200 + i, { ptau: true })
      expect(result.ptauPower).toBe(Math.log2(result.domainSize) + 1)
      const ok = await snarkjs.zKey.verifyFromR1cs(`${base}.r1cs`, `${base}.ptau`, `${base}.zkey`)
      expect(ok).toBe(true)
    }
    // The check can fail: the same circuit's key against another setup's ptau is refused.
    const a = setUp(shapes[1]!, 210, { ptau: true })
    const b = setUp(shapes[1]!, 210, { ptau: true })
    expect(await snarkjs.zKey.verifyFromR1cs(`${a.base}.r1cs`, `${b.base}.ptau`, `${a.base}.zkey`)).toBe(false)
    // And the contribution's proof of knowledge is checked: one made against another transcript's point is refused.
    const wrong = setUp(shapes[1]!, 211, { ptau: true, hashToG2: (t) => hashToG2(t.map((x, i) => (i === 0 ? x ^ 1 : x))) })
    expect(await snarkjs.zKey.verifyFromR1cs(`${wrong.base}.r1cs`, `${wrong.base}.ptau`, `${wrong.base}.zkey`)).toBe(false)
  }, 120_000)

  it("private inputs that are not wires (circom --O2 drops unused ones) are accepted", async () => {
    const { base, built } = setUp({ nOut: 1, nPubIn: 1, nPrvIn: 0, nMul: 5 }, 400, { droppedInputs: 20 })
    expect(built.nWires).toBeLessThan(20)
    const vkey = await snarkjs.zKey.exportVerificationKey(`${base}.zkey`)
    const js = await snarkjs.groth16.prove(`${base}.zkey`, `${base}.wtns`)
    expect(await snarkjs.groth16.verify(vkey, js.publicSignals, js.proof)).toBe(true)
  })

  it("two setups of one circuit draw different toxic waste", async () => {
    const a = setUp(shapes[1]!, 7)
    const b = setUp(shapes[1]!, 7)
    const [va, vb] = await Promise.all([snarkjs.zKey.exportVerificationKey(`${a.base}.zkey`), snarkjs.zKey.exportVerificationKey(`${b.base}.zkey`)])
    for (const key of ["vk_alpha_1", "vk_beta_2", "vk_delta_2", "IC"] as const) expect(va[key]).not.toEqual(vb[key])
    expect(va.vk_gamma_2).toEqual(vb.vk_gamma_2)
    // The circuit hash covers α, β and τ's points, so it differs too.
    expect(a.result.csHash).not.toBe(b.result.csHash)
  })

  it("malformed r1cs files are refused with MZK_INVALID_INPUT naming the problem", () => {
    const { r1cs } = buildCircuit(shapes[1]!, 5)
    expect(refusal(r1cs.subarray(0, 8))).toMatch(/truncated/)
    expect(refusal(r1cs.subarray(0, r1cs.length - 40))).toMatch(/truncated|claims/)
    expect(refusal(concat([new TextEncoder().encode("zkey"), r1cs.subarray(4)]))).toMatch(/not an r1cs file/)
    const bls = 0x73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001n
    expect(refusal(buildCircuit(shapes[1]!, 5, { prime: bls }).r1cs)).toMatch(/not BN254's scalar field/)
    const gates = concat([r1cs.subarray(0, 8), u32(4), r1cs.subarray(12), section(4, u32(0))])
    expect(refusal(gates)).toMatch(/custom gates/)
    // A coefficient equal to r (not canonical) and a wire past the last one.
    const header = concat([u32(32), le(BigInt("0x30644e72e131a029b85045b68181585d2833e84879b9709143e1f593f0000001")), u32(3), u32(1), u32(0), u32(1), u64(3), u32(1)])
    const lc = (wire: number, coef: bigint) => concat([u32(1), u32(wire), le(coef)])
    const bad = (wire: number, coef: bigint) => binFile("r1cs", 1, [section(1, header), section(2, concat([lc(wire, coef), lc(0, 1n), lc(1, 1n)]))])
    expect(refusal(bad(7, 1n))).toMatch(/wire 7/)
    expect(refusal(bad(2, BigInt("0x30644e72e131a029b85045b68181585d2833e84879b9709143e1f593f0000001")))).toMatch(/coefficient/)
  })

  it("a setup that fails part way leaves no file behind, not even a partial one", () => {
    const built = buildCircuit(shapes[1]!, 9)
    const base = join(dir, `fails${count++}`)
    writeFileSync(`${base}.r1cs`, built.r1cs)
    // hashToG2 is called after every point section is written: the failure comes late.
    const boom = () => {
      throw new Error("boom")
    }
    expect(() => addon!.setupDevelopment(`${base}.r1cs`, `${base}.zkey`, { hashToG2: boom, ptauPath: `${base}.ptau` })).toThrow(/boom/)
    for (const file of [`${base}.zkey`, `${base}.zkey.partial`, `${base}.ptau`, `${base}.ptau.partial`]) expect(existsSync(file)).toBe(false)
  })

  it("a missing r1cs is MZK_IO", () => {
    expect(() => addon!.setupDevelopment(join(dir, "none.r1cs"), join(dir, "none.zkey"), { hashToG2 })).toThrow(
      expect.objectContaining({ code: "MZK_IO" })
    )
  })
})
