// The GPU arithmetic's G2 and NTT (native/gpu/: fq2.hpp, g2xyzz.hpp, msmplan.hpp's schedule in G2,
// ntt32.hpp), run on the CPU through the test addon's `testGpu`, against the BigInt reference
// (reference.ts) and the CPU prover's own code (the test addon's `test`) on random values: Fq2
// operations, XYZZ additions and doublings over Fq2 on random representatives (P + P, P + (−P) and
// infinity included), the planned G2 MSM against the naive sum and the CPU prover's G2 MSM, and the
// NTT (forward, inverse, coset, round trip) for every size 2^0..2^10 against the naive DFT and the
// CPU prover's NTT. gpuArithmetic.test.ts compiles these headers as device code where nvcc is found.
import { describe, expect, it } from "@effect/vitest"
import { loadNativeProver } from "@mzk/prover-native"
import { loadNativeTesting } from "@mzk/prover-native/testing"
import fc from "fast-check"
import { refusal } from "./expectations.js"
import { msmScheduleChecks } from "./gpuChecks.js"
import { concat, dft, encodeG2, type F2, f2, fromLe, G2, inv, le, mod, pow, type Point, Q, R, rootOfUnity } from "./reference.js"

const native = loadNativeProver()
const testing = loadNativeTesting()
const addon = testing.ok ? testing.addon : undefined
if (!testing.ok) console.warn(`GPU G2 and NTT tests skipped: ${testing.reason}`)

const TWO_254 = 1n << 254n

const encodeF2 = (a: F2) => concat([le(a[0]), le(a[1])])
const decodeF2 = (b: Uint8Array, o = 0): F2 => [fromLe(b, o), fromLe(b, o + 32)]

const fqValue = fc.oneof(
  fc.constantFrom(0n, 1n, 2n, Q - 1n, Q - 2n, (Q - 1n) / 2n),
  fc.bigInt({ min: 0n, max: 1n << 64n }),
  fc.bigInt({ min: 0n, max: Q - 1n })
)
const f2Value = fc.oneof(
  fc.constantFrom<F2>([0n, 0n], [1n, 0n], [0n, 1n], [Q - 1n, 0n], [0n, Q - 1n], [9n, 1n], [Q - 1n, Q - 1n]),
  fc.tuple(fqValue, fqValue)
)
const nonZeroF2 = fc.tuple(fc.bigInt({ min: 1n, max: Q - 1n }), fc.bigInt({ min: 0n, max: Q - 1n })).map(([a, b]): F2 => [a, b])

// XYZZ over Fq2: a point and a random λ give the representative (λ²x, λ³y, λ², λ³).
type Xyzz2 = readonly [F2, F2, F2, F2]
const xyzzOf = (p: Point<F2>, lambda: F2): Xyzz2 => {
  if (p === null) return [lambda, f2.one, f2.zero, f2.zero]  // any X, Y: ZZ = ZZZ = 0 is infinity
  const l2 = f2.mul(lambda, lambda)
  const l3 = f2.mul(l2, lambda)
  return [f2.mul(p.x, l2), f2.mul(p.y, l3), l2, l3]
}
const encodeXyzz = (p: Xyzz2) => concat(p.map(encodeF2))
/** The point an XYZZ answer stands for; its invariant ZZ³ = ZZZ² (and ZZZ = 0 with ZZ = 0) checked. */
const decodeXyzz = (b: Uint8Array): Point<F2> => {
  expect(b.length).toBe(256)
  const [X, Y, ZZ, ZZZ] = [0, 64, 128, 192].map((o) => decodeF2(b, o)) as [F2, F2, F2, F2]
  expect(f2.mul(f2.mul(ZZ, ZZ), ZZ)).toEqual(f2.mul(ZZZ, ZZZ))
  if (f2.eq(ZZ, f2.zero)) return null
  const p = { x: f2.mul(X, f2.inv(ZZ)), y: f2.mul(Y, f2.inv(ZZZ)) }
  expect(G2.onCurve(p)).toBe(true)
  return p
}
const decodeG2 = (b: Uint8Array): Point<F2> => {
  expect(b.length).toBe(128)
  const x = decodeF2(b, 0)
  const y = decodeF2(b, 64)
  return f2.eq(x, f2.zero) && f2.eq(y, f2.zero) ? null : { x, y }
}

const randomPoint = fc.bigInt({ min: 1n, max: R - 1n }).map((k) => G2.mul(G2.generator, k))
const point = fc.oneof({ weight: 1, arbitrary: fc.constant<Point<F2>>(null) }, { weight: 6, arbitrary: randomPoint })

describe.skipIf(addon === undefined)("GPU G2 and NTT arithmetic on the CPU", () => {
  const gpu = (op: string, args: ReadonlyArray<Uint8Array>, ints: ReadonlyArray<number> = []) => addon!.testGpu(op, args, ints)
  const cpu = (op: string, args: ReadonlyArray<Uint8Array>, ints: ReadonlyArray<number> = []) => addon!.test(op, args, ints)

  describe("Fq2", () => {
    const run = (op: string, ...xs: Array<F2>) => decodeF2(gpu(`fq2.${op}`, xs.map(encodeF2)))

    it("add, sub, mul (Karatsuba), sqr, neg, inv (by the norm), eq, is_zero match BigInt and the CPU prover's Fq2", () => {
      fc.assert(
        fc.property(f2Value, f2Value, fc.boolean(), (a, b0, same) => {
          const b = same ? a : b0
          expect(run("add", a, b)).toEqual(f2.add(a, b))
          expect(run("sub", a, b)).toEqual(f2.sub(a, b))
          expect(run("mul", a, b)).toEqual(f2.mul(a, b))
          expect(run("sqr", a)).toEqual(f2.mul(a, a))
          expect(run("neg", a)).toEqual(f2.neg(a))
          const ai = run("inv", a)
          expect(ai).toEqual(f2.inv(a))
          expect(f2.mul(a, ai)).toEqual(f2.eq(a, f2.zero) ? f2.zero : f2.one)
          expect(Array.from(gpu("fq2.eq", [encodeF2(a), encodeF2(b)]))).toEqual([f2.eq(a, b) ? 1 : 0])
          expect(Array.from(gpu("fq2.iszero", [encodeF2(a)]))).toEqual([f2.eq(a, f2.zero) ? 1 : 0])
          expect(run("mul", a, b)).toEqual(decodeF2(cpu("fq2.mul", [encodeF2(a), encodeF2(b)])))
          expect(run("sqr", a)).toEqual(decodeF2(cpu("fq2.sqr", [encodeF2(a)])))
          expect(ai).toEqual(decodeF2(cpu("fq2.inv", [encodeF2(a)])))
        }),
        { numRuns: 300 }
      )
    })

    it("u² = −1, and values ≥ q or of the wrong length are refused", () => {
      expect(run("sqr", [0n, 1n])).toEqual([Q - 1n, 0n])
      expect(run("mul", [0n, 1n], [0n, Q - 1n])).toEqual([1n, 0n])
      expect(refusal(() => gpu("fq2.mul", [encodeF2([Q, 0n]), encodeF2([1n, 0n])]))).toMatch(/not below the modulus/)
      expect(refusal(() => gpu("fq2.mul", [encodeF2([1n, Q]), encodeF2([1n, 0n])]))).toMatch(/not below the modulus/)
      expect(refusal(() => gpu("fq2.sqr", [le(1n)]))).toMatch(/64 bytes/)
    })
  })

  describe("G2 in XYZZ coordinates", () => {
    const madd = (p: Xyzz2, q: Point<F2>) => decodeXyzz(gpu("g2.madd", [encodeXyzz(p), encodeG2(q)]))
    const add = (p: Xyzz2, q: Xyzz2) => decodeXyzz(gpu("g2.add", [encodeXyzz(p), encodeXyzz(q)]))
    const dbl = (p: Xyzz2) => decodeXyzz(gpu("g2.dbl", [encodeXyzz(p)]))

    it("mixed add, add, double, negate, to affine, to Jacobian match reference G2 (P + P, P − P, infinity included)", () => {
      fc.assert(
        fc.property(point, point, nonZeroF2, nonZeroF2, fc.constantFrom("other", "same", "negated"), (p, q0, lp, lq, relation) => {
          const q = relation === "same" ? p : relation === "negated" ? G2.neg(p) : q0
          const P = xyzzOf(p, lp)
          const Qx = xyzzOf(q, lq)
          const sum = G2.add(p, q)
          expect(madd(P, q)).toEqual(sum)
          expect(add(P, Qx)).toEqual(sum)
          expect(dbl(P)).toEqual(G2.add(p, p))
          expect(decodeXyzz(gpu("g2.neg", [encodeXyzz(P)]))).toEqual(G2.neg(p))
          expect(decodeG2(gpu("g2.affine", [encodeXyzz(P)]))).toEqual(p)
          const jac = gpu("g2.jacobian", [encodeXyzz(P)])
          const [X, Y, Z] = [0, 64, 128].map((o) => decodeF2(jac, o)) as [F2, F2, F2]
          if (p === null) {
            expect(Z).toEqual(f2.zero)
          } else {
            const zInv = f2.inv(Z)
            const zInv2 = f2.mul(zInv, zInv)
            expect({ x: f2.mul(X, zInv2), y: f2.mul(Y, f2.mul(zInv2, zInv)) }).toEqual(p)
          }
        }),
        { numRuns: 60 }
      )
    })

    it("the special cases, each with non-trivial ZZ: P + P doubles, P + (−P) and ∞ + ∞ are ∞, ∞ + P is P", () => {
      const p = G2.mul(G2.generator, 0xfeedbeefn)
      const lambda: F2 = [0x123456789n, 5n]
      const P = xyzzOf(p, lambda)
      const inf = xyzzOf(null, [7n, 3n])
      expect(madd(P, p)).toEqual(G2.add(p, p))
      expect(add(P, xyzzOf(p, [2n, 1n]))).toEqual(G2.add(p, p))
      expect(madd(P, G2.neg(p))).toBeNull()
      expect(add(P, xyzzOf(G2.neg(p), [5n, 0n]))).toBeNull()
      expect(madd(inf, p)).toEqual(p)
      expect(madd(P, null)).toEqual(p)
      expect(madd(inf, null)).toBeNull()
      expect(add(inf, P)).toEqual(p)
      expect(add(P, inf)).toEqual(p)
      expect(add(inf, inf)).toBeNull()
      expect(dbl(inf)).toBeNull()
      expect(decodeG2(gpu("g2.affine", [encodeXyzz(inf)]))).toBeNull()
      // The doubled generator against the CPU prover's G2 doubling.
      expect(dbl(xyzzOf(G2.generator, [3n, 4n]))).toEqual(decodeG2(cpu("g2.dbl", [encodeG2(G2.generator)])))
    })

    it("the curve is the twist y² = x³ + 3/(9 + u): G1's b, off-curve points and ZZ³ ≠ ZZZ² are refused", () => {
      // (1, 2) over Fq lies on y² = x³ + 3, so it is on the twist only if b were 3.
      const onB3: Point<F2> = { x: [1n, 0n], y: [2n, 0n] }
      expect(refusal(() => gpu("g2.madd", [encodeXyzz(xyzzOf(G2.generator, [2n, 0n])), encodeG2(onB3)]))).toMatch(/G2 point not on the curve/)
      expect(refusal(() => gpu("g2.dbl", [encodeXyzz(xyzzOf(onB3, [1n, 0n]))]))).toMatch(/not on the curve/)
      const g = G2.generator!
      expect(refusal(() => gpu("g2.dbl", [encodeXyzz([g.x, g.y, [4n, 0n], [9n, 0n]])]))).toMatch(/ZZ\^3 != ZZZ\^2/)
      expect(refusal(() => gpu("g2.dbl", [encodeXyzz(xyzzOf(G2.generator, [2n, 0n])).subarray(0, 128)]))).toMatch(/four coordinates/)
    })
  })

  describe("G2 MSM schedule", () => {
    const { base } = msmScheduleChecks({
      name: "g2",
      curve: G2,
      encode: encodeG2,
      decode: (b) => decodeG2(b),
      randomPoint,
      gpu,
      cpu: native.ok ? cpu : undefined,
      runs: { terms: 12, planned: 25, edgeTerms: 4, edge: 15 }
    })

    it("bad G2 MSM arguments are refused", () => {
      expect(refusal(() => gpu("msm.g2", [encodeG2(base), concat([le(1n), le(2n)])], [4]))).toMatch(/one scalar per base/)
      expect(refusal(() => gpu("msm.g2", [encodeG2(base), le(TWO_254)], [4]))).toMatch(/2\^254/)
      expect(refusal(() => gpu("msm.g2", [encodeG2({ x: [1n, 0n], y: [2n, 0n] }), le(1n)], [4]))).toMatch(/not on the curve/)
    })
  })

  describe("NTT over Fr", () => {
    const frValue = fc.oneof(fc.constantFrom(0n, 1n, R - 1n), fc.bigInt({ min: 0n, max: R - 1n }))
    const values = (log: number) => fc.array(frValue, { minLength: 1 << log, maxLength: 1 << log })
    const run = (op: string, a: ReadonlyArray<bigint>) => {
      const out = gpu(`ntt.${op}`, [concat(a.map(le))])
      expect(out.length).toBe(32 * a.length)
      return a.map((_, i) => fromLe(out, 32 * i))
    }
    const runCpu = (mode: number, a: ReadonlyArray<bigint>) => {
      const out = cpu("ntt", [concat(a.map(le))], [mode])
      return a.map((_, i) => fromLe(out, 32 * i))
    }
    const shiftOf = (log: number) => rootOfUnity(log + 1)
    /** Σ c_i·x^i by Horner: the polynomial's value at one point. */
    const evaluate = (c: ReadonlyArray<bigint>, x: bigint) => c.reduceRight((acc, ci) => mod(acc * x + ci, R), 0n)
    /** The reference for one size: the naive DFT up to 2^7, else Horner at 8 sampled points. */
    const checkAgainstReference = (log: number, coeffs: ReadonlyArray<bigint>, evals: ReadonlyArray<bigint>, shift: bigint) => {
      const n = 1 << log
      const w = rootOfUnity(log)
      if (log <= 7) {
        const scaled = coeffs.map((ci, i) => mod(ci * pow(shift, BigInt(i), R), R))
        expect(evals).toEqual(dft(scaled, w))
      } else {
        for (const j of [0, 1, 2, n / 2, n - 1, 37, 101, n - 5]) expect(evals[j]).toBe(evaluate(coeffs, mod(shift * pow(w, BigInt(j), R), R)))
      }
    }

    it("the roots of unity and coset shifts are snarkjs's (and the CPU prover's), for every k = 0..28", () => {
      for (let k = 0; k <= 28; k++) {
        const w = fromLe(gpu("ntt.root", [], [k]))
        expect(w).toBe(rootOfUnity(k))
        expect(w).toBe(fromLe(cpu("root", [], [k])))
        expect(pow(w, 1n << BigInt(k), R)).toBe(1n)
        if (k > 0) expect(pow(w, 1n << BigInt(k - 1), R)).toBe(R - 1n)
        expect(fromLe(gpu("ntt.shift", [], [k]))).toBe(k < 28 ? rootOfUnity(k + 1) : 25n)
      }
    })

    for (let log = 0; log <= 10; log++) {
      it(`size 2^${log}: forward, inverse, coset and to-coset match the reference and the CPU prover's NTT; round trips are the identity`, () => {
        fc.assert(
          fc.property(values(log), (a) => {
            const n = 1 << log
            const fwd = run("forward", a)
            checkAgainstReference(log, a, fwd, 1n)
            expect(fwd).toEqual(runCpu(0, a))
            const back = run("inverse", fwd)
            expect(back).toEqual(a)
            const inverse = run("inverse", a)
            expect(inverse).toEqual(runCpu(1, a))
            // The inverse is the DFT at ω⁻¹ scaled by 1/n: its forward transform is a again.
            if (log <= 7) expect(inverse).toEqual(dft(a, inv(rootOfUnity(log), R)).map((x) => mod(x * inv(BigInt(n), R), R)))
            const coset = run("coset", a)
            checkAgainstReference(log, a, coset, shiftOf(log))
            const toCoset = run("tocoset", a)
            expect(toCoset).toEqual(runCpu(2, a))
            checkAgainstReference(log, inverse, toCoset, shiftOf(log))
          }),
          { numRuns: log <= 6 ? 12 : log <= 8 ? 4 : 2 }
        )
      })
    }

    it("sizes that are not powers of two, values ≥ r and unknown ops are refused", () => {
      expect(refusal(() => gpu("ntt.forward", [concat([le(1n), le(2n), le(3n)])]))).toMatch(/power of two/)
      expect(refusal(() => gpu("ntt.forward", [new Uint8Array(0)]))).toMatch(/power of two/)
      expect(refusal(() => gpu("ntt.forward", [new Uint8Array(33)]))).toMatch(/power of two/)
      expect(refusal(() => gpu("ntt.inverse", [concat([le(R), le(0n)])]))).toMatch(/not below the modulus/)
      expect(refusal(() => gpu("ntt.nope", [le(1n)]))).toMatch(/unknown op/)
      expect(refusal(() => gpu("ntt.root", [], [29]))).toMatch(/0\.\.28/)
    })
  })
})
