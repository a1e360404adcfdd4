// The GPU MSM's arithmetic (native/gpu/: 32-bit-limb Fq and Fr, G1 in XYZZ coordinates, the
// Pippenger schedule), run on the CPU through the test addon's `testGpu`, against the BigInt
// reference (reference.ts) on random values: field operations and the Montgomery form, XYZZ
// additions and doublings on random representatives (P + P, P + (−P) and infinity included), signed
// digits that rebuild every scalar and stay in range, the grouping of (point, digit) pairs by
// bucket, and the whole planned MSM against the naive sum and the CPU prover's MSM. Last, where nvcc
// is installed, that the shared headers (these and gpuG2Ntt.test.ts's) compile as device code.
import { describe, expect, it } from "@effect/vitest"
import { loadNativeProver } from "@mzk/prover-native"
import { loadNativeTesting } from "@mzk/prover-native/testing"
import fc from "fast-check"
import { spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { delimiter, join } from "node:path"
import { fileURLToPath } from "node:url"
import { expectFieldOps, refusal } from "./expectations.js"
import { msmScheduleChecks, scalar254 } from "./gpuChecks.js"
import { concat, decodeG1, encodeG1, fromLe, G1, inv, le, mod, type Point, progression, Q, R } from "./reference.js"

const native = loadNativeProver()
const testing = loadNativeTesting()

describe("@mzk/prover-native GPU arithmetic build", () => {
  it("the test addon has the GPU entry points (required where CI=true)", () => {
    if (process.env.CI === "true") expect(testing.ok ? typeof testing.addon.testGpu : testing.reason).toBe("function")
    if (!testing.ok) console.warn(`GPU arithmetic tests skipped: ${testing.reason}`)
  })
})

const addon = testing.ok ? testing.addon : undefined

const TWO_254 = 1n << 254n
const TWO_256 = 1n << 256n

const u32s = (b: Uint8Array) => {
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength)
  return Array.from({ length: b.byteLength / 4 }, (_, i) => view.getUint32(4 * i, true))
}
const SIGN = 0x80000000
/** A digit's encoding (magnitude, sign in bit 31) as a number; −0 is refused, it must not occur. */
const digitValue = (v: number) => {
  const magnitude = v & 0x7fffffff
  if (v >>> 31 === 1 && magnitude === 0) throw new Error("negative zero digit")
  return v >>> 31 === 1 ? -magnitude : magnitude
}
const windowsFor = (c: number) => Math.ceil(255 / c)

const element = (p: bigint) =>
  fc.oneof(
    fc.constantFrom(0n, 1n, 2n, p - 1n, p - 2n, (p - 1n) / 2n),
    fc.bigInt({ min: 0n, max: 1n << 64n }),
    fc.bigInt({ min: 0n, max: p - 1n })
  )
const nonZero = fc.bigInt({ min: 1n, max: Q - 1n })

// XYZZ: (X, Y, ZZ, ZZZ) stands for (X/ZZ, Y/ZZZ) with ZZ³ = ZZZ²; a point and a random λ give the
// representative (λ²x, λ³y, λ², λ³), so every operation sees coordinates that are not affine.
type Xyzz = readonly [bigint, bigint, bigint, bigint]
const xyzzOf = (p: Point<bigint>, lambda: bigint): Xyzz => {
  if (p === null) return [mod(lambda, Q), 1n, 0n, 0n]  // any X, Y: ZZ = ZZZ = 0 is infinity
  const l2 = mod(lambda * lambda, Q)
  const l3 = mod(l2 * lambda, Q)
  return [mod(p.x * l2, Q), mod(p.y * l3, Q), l2, l3]
}
const encodeXyzz = (p: Xyzz) => concat(p.map(le))
/** The point an XYZZ answer stands for; its invariant ZZ³ = ZZZ² (and ZZZ = 0 with ZZ = 0) checked. */
const decodeXyzz = (b: Uint8Array): Point<bigint> => {
  expect(b.length).toBe(128)
  const [X, Y, ZZ, ZZZ] = [0, 32, 64, 96].map((o) => fromLe(b, o)) as [bigint, bigint, bigint, bigint]
  expect(mod(ZZ * ZZ * ZZ, Q)).toBe(mod(ZZZ * ZZZ, Q))
  if (ZZ === 0n) return null
  const p = { x: mod(X * inv(ZZ, Q), Q), y: mod(Y * inv(ZZZ, Q), Q) }
  expect(G1.onCurve(p)).toBe(true)
  return p
}

const randomPoint = fc.bigInt({ min: 1n, max: R - 1n }).map((k) => G1.mul(G1.generator, k))
const point = fc.oneof({ weight: 1, arbitrary: fc.constant<Point<bigint>>(null) }, { weight: 6, arbitrary: randomPoint })

describe.skipIf(addon === undefined)("GPU arithmetic on the CPU", () => {
  const gpu = (op: string, args: ReadonlyArray<Uint8Array>, ints: ReadonlyArray<number> = []) => addon!.testGpu(op, args, ints)

  for (const [name, p] of [["fq", Q], ["fr", R]] as const) {
    describe(name, () => {
      it("constants computed from the BN seed: p, 2^256 mod p, 2^512 mod p, −p⁻¹ mod 2^32", () => {
        const out = gpu(`${name}.constants`, [])
        expect(fromLe(out, 0)).toBe(p)
        expect(fromLe(out, 32)).toBe(TWO_256 % p)
        expect(fromLe(out, 64)).toBe((TWO_256 * TWO_256) % p)
        const invWord = fromLe(out, 96)
        expect(invWord < 1n << 32n).toBe(true)
        expect(mod(p * invWord, 1n << 32n)).toBe((1n << 32n) - 1n)
      })

      it("add, sub, mul, sqr, neg, inv, eq, is_zero match BigInt", () => {
        fc.assert(
          fc.property(element(p), element(p), fc.boolean(), (a, b0, same) => {
            const b = same ? a : b0
            const run = (op: string, ...xs: Array<bigint>) => fromLe(gpu(`${name}.${op}`, xs.map(le)))
            expectFieldOps(run, a, b, p)
            expect(Array.from(gpu(`${name}.eq`, [le(a), le(b)]))).toEqual([a === b ? 1 : 0])
            expect(Array.from(gpu(`${name}.iszero`, [le(a)]))).toEqual([a === 0n ? 1 : 0])
          }),
          { numRuns: 300 }
        )
      })

      it("Montgomery form: a·2^256 mod p in, m·2^−256 mod p out, and the round trip is the identity", () => {
        const rInv = inv(TWO_256 % p, p)
        fc.assert(
          fc.property(element(p), element(p), (a, m) => {
            const mont = fromLe(gpu(`${name}.tomont`, [le(a)]))
            expect(mont).toBe((a * TWO_256) % p)
            expect(fromLe(gpu(`${name}.frommont`, [le(mont)]))).toBe(a)
            expect(fromLe(gpu(`${name}.frommont`, [le(m)]))).toBe(mod(m * rInv, p))
          }),
          { numRuns: 200 }
        )
      })

      it("values ≥ p are refused", () => {
        expect(refusal(() => gpu(`${name}.mul`, [le(p), le(1n)]))).toMatch(/not below the modulus/)
        expect(refusal(() => gpu(`${name}.frommont`, [le(TWO_256 - 1n)]))).toMatch(/not below the modulus/)
      })
    })
  }

  describe("G1 in XYZZ coordinates", () => {
    const madd = (p: Xyzz, q: Point<bigint>) => decodeXyzz(gpu("g1.madd", [encodeXyzz(p), encodeG1(q)]))
    const add = (p: Xyzz, q: Xyzz) => decodeXyzz(gpu("g1.add", [encodeXyzz(p), encodeXyzz(q)]))
    const dbl = (p: Xyzz) => decodeXyzz(gpu("g1.dbl", [encodeXyzz(p)]))

    it("mixed add, add, double, negate, to affine, to Jacobian match reference G1 (P + P, P − P, infinity included)", () => {
      fc.assert(
        fc.property(point, point, nonZero, nonZero, fc.constantFrom("other", "same", "negated"), (p, q0, lp, lq, relation) => {
          const q = relation === "same" ? p : relation === "negated" ? G1.neg(p) : q0
          const P = xyzzOf(p, lp)
          const Qx = xyzzOf(q, lq)
          const sum = G1.add(p, q)
          expect(madd(P, q)).toEqual(sum)
          expect(add(P, Qx)).toEqual(sum)
          expect(dbl(P)).toEqual(G1.add(p, p))
          expect(decodeXyzz(gpu("g1.neg", [encodeXyzz(P)]))).toEqual(G1.neg(p))
          expect(decodeG1(gpu("g1.affine", [encodeXyzz(P)]))).toEqual(p)
          const jac = gpu("g1.jacobian", [encodeXyzz(P)])
          const [X, Y, Z] = [0, 32, 64].map((o) => fromLe(jac, o)) as [bigint, bigint, bigint]
          if (p === null) {
            expect(Z).toBe(0n)
          } else {
            const zInv = inv(Z, Q)
            expect({ x: mod(X * zInv * zInv, Q), y: mod(Y * zInv * zInv * zInv, Q) }).toEqual(p)
          }
        }),
        { numRuns: 120 }
      )
    })

    it("the special cases, each with non-trivial ZZ: P + P doubles, P + (−P) and ∞ + ∞ are ∞, ∞ + P is P", () => {
      const p = G1.mul(G1.generator, 0xfeedbeefn)
      const lambda = 0x123456789n
      const P = xyzzOf(p, lambda)
      const inf = xyzzOf(null, 7n)
      expect(madd(P, p)).toEqual(G1.add(p, p))
      expect(add(P, xyzzOf(p, lambda + 1n))).toEqual(G1.add(p, p))
      expect(madd(P, G1.neg(p))).toBeNull()
      expect(add(P, xyzzOf(G1.neg(p), 5n))).toBeNull()
      expect(madd(inf, p)).toEqual(p)
      expect(madd(P, null)).toEqual(p)
      expect(madd(inf, null)).toBeNull()
      expect(add(inf, P)).toEqual(p)
      expect(add(P, inf)).toEqual(p)
      expect(add(inf, inf)).toBeNull()
      expect(dbl(inf)).toBeNull()
      expect(decodeG1(gpu("g1.affine", [encodeXyzz(inf)]))).toBeNull()
      // 2·G1, a known vector independent of the reference's arithmetic.
      expect(dbl(xyzzOf(G1.generator, 3n))).toEqual({
        x: 1368015179489954701390400359078579693043519447331113978918064868415326638035n,
        y: 9918110051302171585080402603319702774565515993150576347155970296011118125764n
      })
    })

    it("points off the curve and representatives with ZZ³ ≠ ZZZ² are refused", () => {
      expect(refusal(() => gpu("g1.dbl", [encodeXyzz([1n, 3n, 1n, 1n])]))).toMatch(/not on the curve/)
      expect(refusal(() => gpu("g1.dbl", [encodeXyzz([1n, 2n, 4n, 9n])]))).toMatch(/ZZ\^3 != ZZZ\^2/)
      expect(refusal(() => gpu("g1.madd", [encodeXyzz(xyzzOf(G1.generator, 2n)), concat([le(1n), le(3n)])]))).toMatch(/not on the curve/)
    })
  })

  describe("MSM schedule", () => {
    const digitsOf = (scalars: ReadonlyArray<bigint>, c: number) => {
      const raw = u32s(gpu("msm.digits", [concat(scalars.map(le))], [c]))
      const W = windowsFor(c)
      expect(raw.length).toBe(W * scalars.length)
      return { raw, W, digit: (w: number, i: number) => digitValue(raw[w * scalars.length + i]!) }
    }

    it("the window size grows with n and stays within 2..16", () => {
      const ns = [0, 1, 2, 10, 100, 1000, 10_000, 100_000, 1 << 20, 1 << 24, 1 << 28]
      const cs = Array.from(gpu("msm.window", [], ns))
      expect(cs.length).toBe(ns.length)
      for (const c of cs) expect(c >= 2 && c <= 16).toBe(true)
      for (let i = 1; i < cs.length; i++) expect(cs[i]! >= cs[i - 1]!).toBe(true)
      expect(cs[cs.length - 1]!).toBeGreaterThan(cs[0]!)
    })

    it("signed digits rebuild every scalar (Σ d·2^(c·w) = s) and lie in (−2^(c−1), 2^(c−1)], for c = 1..16", () => {
      fc.assert(
        fc.property(fc.array(scalar254, { minLength: 1, maxLength: 12 }), fc.integer({ min: 1, max: 16 }), (scalars, c) => {
          const { W, digit } = digitsOf(scalars, c)
          const half = 2 ** (c - 1)
          scalars.forEach((s, i) => {
            let rebuilt = 0n
            for (let w = 0; w < W; w++) {
              const d = digit(w, i)
              expect(d > -half && d <= half).toBe(true)
              rebuilt += BigInt(d) << BigInt(c * w)
            }
            expect(rebuilt).toBe(s)
          })
        }),
        { numRuns: 200 }
      )
    })

    it("the top window never overflows: 2^254 − 1 in every width, and c dividing 254 takes the extra window", () => {
      for (let c = 1; c <= 16; c++) {
        const { W, digit } = digitsOf([TWO_254 - 1n, R - 1n], c)
        for (const i of [0, 1]) {
          let rebuilt = 0n
          for (let w = 0; w < W; w++) rebuilt += BigInt(digit(w, i)) << BigInt(c * w)
          expect(rebuilt).toBe(i === 0 ? TWO_254 - 1n : R - 1n)
        }
      }
      // c = 2: 2^254 − 1 needs a digit at 2^254 (…11 → …(+1)(−1)), one window past ⌈254/2⌉.
      const { W, digit } = digitsOf([TWO_254 - 1n], 2)
      expect(W).toBe(128)
      expect(digit(127, 0)).toBe(1)
      expect(refusal(() => gpu("msm.digits", [le(TWO_254)], [8]))).toMatch(/2\^254/)
      expect(refusal(() => gpu("msm.digits", [le(1n)], [17]))).toMatch(/window bits/)
    })

    it("grouping puts each (point, nonzero digit) exactly once in its (window, bucket), in point order", () => {
      fc.assert(
        fc.property(fc.array(scalar254, { minLength: 0, maxLength: 16 }), fc.integer({ min: 1, max: 10 }), (scalars, c) => {
          const n = scalars.length
          const W = windowsFor(c)
          const B = 2 ** (c - 1)
          const K = W * B
          const out = u32s(gpu("msm.buckets", [concat(scalars.map(le))], [c]))
          const offsets = out.slice(0, K + 1)
          const entries = out.slice(K + 1)
          expect(offsets[0]).toBe(0)
          expect(offsets[K]).toBe(entries.length)
          const { raw } = n === 0 ? { raw: [] as Array<number> } : digitsOf(scalars, c)
          expect(entries.length).toBe(raw.filter((d) => d !== 0).length)
          // Every entry's contribution ±(bucket + 1)·2^(c·window) summed per point rebuilds its
          // scalar, and no point is in two buckets of one window.
          const rebuilt = scalars.map(() => 0n)
          const seen = new Set<string>()
          for (let k = 0; k < K; k++) {
            expect(offsets[k + 1]! >= offsets[k]!).toBe(true)
            const w = Math.floor(k / B)
            const magnitude = (k % B) + 1
            let last = -1
            for (let e = offsets[k]!; e < offsets[k + 1]!; e++) {
              const entry = entries[e]!
              const i = entry & 0x7fffffff
              expect(i < n).toBe(true)
              expect(i > last).toBe(true)
              last = i
              expect(seen.has(`${i}:${w}`)).toBe(false)
              seen.add(`${i}:${w}`)
              const sign = (entry & SIGN) !== 0 ? -1n : 1n
              rebuilt[i]! += (sign * BigInt(magnitude)) << BigInt(c * w)
            }
          }
          expect(rebuilt).toEqual(scalars)
        }),
        { numRuns: 150 }
      )
    })

    const { base, cpuMsm, msm } = msmScheduleChecks({
      name: "g1",
      curve: G1,
      encode: encodeG1,
      decode: (b) => decodeG1(b),
      randomPoint,
      gpu,
      cpu: native.ok ? (op, args, ints) => addon!.test(op, args, ints) : undefined,
      runs: { terms: 20, planned: 40, edgeTerms: 6, edge: 25 }
    })

    it("an MSM of 96 random points and scalars equals the naive sum and the CPU prover's, at the chosen width and others", () => {
      const n = 96
      const points = progression(G1, n)
      fc.assert(
        fc.property(fc.array(fc.bigInt({ min: 0n, max: R - 1n }), { minLength: n, maxLength: n }), fc.constantFrom(0, 3, 7, 11), (scalars, c) => {
          const expected = G1.msm(points, scalars)
          expect(msm(points, scalars, c)).toEqual(expected)
          if (native.ok) expect(cpuMsm(points, scalars)).toEqual(expected)
        }),
        { numRuns: 3 }
      )
    })

    it("bad MSM arguments are refused", () => {
      expect(refusal(() => gpu("msm.g1", [encodeG1(base), concat([le(1n), le(2n)])], [4]))).toMatch(/one scalar per base/)
      expect(refusal(() => gpu("msm.g1", [encodeG1(base), le(TWO_254)], [4]))).toMatch(/2\^254/)
      expect(refusal(() => gpu("msm.g1", [concat([le(1n), le(3n)]), le(1n)], [4]))).toMatch(/not on the curve/)
      expect(refusal(() => gpu("nope", [], []))).toMatch(/unknown op/)
    })
  })
})

// nvcc where the CUDA toolkit puts it, else on PATH.
const nvcc = ["/usr/local/cuda/bin/nvcc", ...(process.env.PATH ?? "").split(delimiter).filter(Boolean).map((d) => join(d, "nvcc"))].find((f) =>
  existsSync(f)
)
if (nvcc === undefined) console.warn("GPU device-compile check skipped: nvcc not found (/usr/local/cuda/bin/nvcc or on PATH)")

describe("GPU arithmetic as device code", () => {
  // Without optimisation: whether code builds for the device is the compiler's front end's verdict
  // (a host function called from device code fails there), so the optimiser and ptxas, 55 s of a
  // full compile of device_check.cu here against 2.5 s, add nothing to the check.
  const cases = [
    {
      name: "native/gpu/device_check.cu (Fq, Fr, Fq2, G1 and G2 XYZZ, the NTT passes) compiles with nvcc for sm_90",
      file: "device_check.cu",
      args: ["-ptx", "-Xcicc", "-O0"],
      out: "device_check.ptx"
    },
    {
      // The program a GPU machine runs (no Node there): host and device code both compiled here.
      name: "native/gpu/gpu_check.cu, the device MSM's check program (msm_cuda.cuh), compiles with nvcc for sm_90",
      file: "gpu_check.cu",
      args: ["-c", "-Xcicc", "-O0", "-Xptxas", "-O0"],
      out: "gpu_check.o"
    }
  ]
  for (const { args, file, name, out } of cases) {
    it.skipIf(nvcc === undefined)(name, () => {
      const source = fileURLToPath(new URL(`../native/gpu/${file}`, import.meta.url))
      const dir = mkdtempSync(join(tmpdir(), "mzk-nvcc-"))
      try {
        const run = spawnSync(nvcc!, ["-std=c++17", "-arch=sm_90", ...args, "-o", join(dir, out), source], { encoding: "utf8", timeout: 110_000 })
        expect(run.error, String(run.error)).toBeUndefined()
        expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0)
        expect(existsSync(join(dir, out))).toBe(true)
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    }, 120_000)
  }
})
