// The native kernels' arithmetic against the BigInt reference (reference.ts) on random values:
// both fields, Fq2, G1 and G2 (addition, mixed addition, doubling, scalar multiplication), the
// MSM against the naive sum (every table layout: digit widths, precomputed copies, threads), and
// the NTT / coset evaluation against the naive DFT. Every check runs on each kernel the CPU has.
import { describe, expect, it } from "@effect/vitest"
import { loadNativeProver } from "@mzk/prover-native"
import { loadNativeTesting } from "@mzk/prover-native/testing"
import fc from "fast-check"
import {
  concat,
  decodeG1,
  decodeG2,
  dft,
  encodeG1,
  encodeG2,
  type F2,
  f2,
  fromLe,
  G1,
  G2,
  inv,
  le,
  mod,
  type Point,
  pow,
  progression,
  Q,
  R,
  rootOfUnity
} from "./reference.js"
import { expectFieldOps } from "./expectations.js"

const native = loadNativeProver()
// The arithmetic's test entry points are in the test addon, built beside the production one.
const testing = loadNativeTesting()

describe("@mzk/prover-native build", () => {
  it("the addon loads (required where CI=true, so a broken build cannot pass silently)", () => {
    if (process.env.CI === "true") expect(native.ok ? "loaded" : native.reason).toBe("loaded")
    if (process.env.CI === "true") expect(testing.ok ? "loaded" : testing.reason).toBe("loaded")
    if (!native.ok) console.warn(`native prover tests skipped: ${native.reason}`)
    else if (!testing.ok) console.warn(`native arithmetic tests skipped: ${testing.reason}`)
  })
})

const addon = native.ok && testing.ok ? testing.addon : undefined
const kernels = addon?.kernels ?? []

// Field elements biased toward the edges (0, 1, p - 1, small values) as well as uniform ones.
const element = (p: bigint) =>
  fc.oneof(
    fc.constantFrom(0n, 1n, 2n, p - 1n, p - 2n, (p - 1n) / 2n),
    fc.bigInt({ min: 0n, max: 1n << 64n }),
    fc.bigInt({ min: 0n, max: p - 1n })
  )
const scalar = element(R)

describe.skipIf(addon === undefined)("native arithmetic", () => {
  const test = (op: string, args: ReadonlyArray<Uint8Array>, ints: ReadonlyArray<number>, kernel: string) =>
    addon!.test(op, args, ints, kernel)

  for (const kernel of kernels) {
    describe(`kernel ${kernel}`, () => {
      for (const [name, p] of [["fq", Q], ["fr", R]] as const) {
        it(`${name}: add, sub, mul, sqr, neg, inv match BigInt`, () => {
          fc.assert(
            fc.property(element(p), element(p), (a, b) => {
              const run = (op: string, ...xs: Array<bigint>) => fromLe(test(`${name}.${op}`, xs.map(le), [], kernel))
              expectFieldOps(run, a, b, p)
              if (a !== 0n) expect(mod(run("inv", a) * a, p)).toBe(1n)
            }),
            { numRuns: 300 }
          )
        })
      }

      it("fq2: mul, sqr, inv match BigInt", () => {
        const e2 = fc.tuple(element(Q), element(Q))
        fc.assert(
          fc.property(e2, e2, (a, b) => {
            const run = (op: string, ...xs: Array<F2>) => {
              const out = test(`fq2.${op}`, xs.map((x) => concat([le(x[0]), le(x[1])])), [], kernel)
              return [fromLe(out, 0), fromLe(out, 32)]
            }
            expect(run("mul", a, b)).toEqual(f2.mul(a, b))
            expect(run("sqr", a)).toEqual(f2.mul(a, a))
            expect(run("inv", a)).toEqual(a[0] === 0n && a[1] === 0n ? [0n, 0n] : f2.inv(a))
          }),
          { numRuns: 200 }
        )
      })

      it("known vectors: 2·G1, (r - 1)·G1 = -G1, r·G1 = r·G2 = infinity", () => {
        const g1 = encodeG1(G1.generator)
        expect(decodeG1(test("g1.dbl", [g1], [], kernel))).toEqual({
          x: 1368015179489954701390400359078579693043519447331113978918064868415326638035n,
          y: 9918110051302171585080402603319702774565515993150576347155970296011118125764n
        })
        expect(decodeG1(test("g1.mul", [g1, le(R - 1n)], [], kernel))).toEqual({ x: 1n, y: Q - 2n })
        expect(decodeG1(test("g1.mul", [g1, le(R)], [], kernel))).toBeNull()
        expect(decodeG2(test("g2.mul", [encodeG2(G2.generator), le(R)], [], kernel))).toBeNull()
        expect(G2.onCurve(G2.generator)).toBe(true)
      })

      const curveChecks = <T>(
        name: "g1" | "g2",
        C: typeof G1 | typeof G2,
        encode: (p: Point<T>) => Uint8Array,
        decode: (b: Uint8Array) => Point<T>,
        runs: number
      ) => {
        const curve = C as unknown as import("./reference.js").Curve<T>
        const point = fc.oneof(
          { weight: 1, arbitrary: fc.constant<Point<T>>(null) },
          { weight: 6, arbitrary: fc.bigInt({ min: 1n, max: R - 1n }).map((k) => curve.mul(curve.generator, k)) }
        )
        it(`${name}: add, mixed add, double, scalar mul match BigInt (infinity, P + P, P - P included)`, () => {
          fc.assert(
            fc.property(point, point, scalar, fc.constantFrom("other", "same", "negated"), (p, q0, k, relation) => {
              const q = relation === "same" ? p : relation === "negated" ? curve.neg(p) : q0
              expect(decode(test(`${name}.add`, [encode(p), encode(q)], [], kernel))).toEqual(curve.add(p, q))
              expect(decode(test(`${name}.madd`, [encode(p), encode(q)], [], kernel))).toEqual(curve.add(p, q))
              expect(decode(test(`${name}.dbl`, [encode(p)], [], kernel))).toEqual(curve.add(p, p))
              expect(decode(test(`${name}.mul`, [encode(p), le(k)], [], kernel))).toEqual(curve.mul(p, k))
            }),
            { numRuns: runs }
          )
        })

        it(`${name}: MSM equals the naive sum for every table layout, zero/one/small scalars and repeated bases`, () => {
          const base = curve.mul(curve.generator, 0x1234567890abcdefn)
          fc.assert(
            fc.property(
              fc.array(
                fc.tuple(
                  fc.oneof(fc.constantFrom(0n, 1n, 2n, R - 1n), fc.bigInt({ min: 0n, max: 1n << 20n }), scalar),
                  fc.integer({ min: 0, max: 5 })
                ),
                { minLength: 1, maxLength: name === "g1" ? 48 : 16 }
              ),
              fc.record({ c: fc.integer({ min: 0, max: 11 }), copies: fc.integer({ min: 0, max: 40 }), threads: fc.integer({ min: 1, max: 4 }) }),
              (terms, layout) => {
                // Bases from a few distinct points (so repeats, P and -P, and infinity occur).
                const distinct = [base, curve.add(base, base), curve.neg(base), null, curve.mul(base, 7n), curve.generator]
                const points = terms.map(([, which]) => distinct[which]!)
                const scalars = terms.map(([s]) => s)
                const out = test(
                  `${name}.msm`,
                  [concat(points.map(encode)), concat(scalars.map(le))],
                  [layout.c === 1 ? 2 : layout.c, layout.copies, layout.threads],
                  kernel
                )
                expect(decode(out)).toEqual(curve.msm(points, scalars))
              }
            ),
            { numRuns: runs }
          )
        })
      }
      curveChecks("g1", G1, encodeG1, (b) => decodeG1(b), 60)
      curveChecks("g2", G2, encodeG2, (b) => decodeG2(b), 20)

      it("g1: MSM of hundreds of random points and scalars equals the naive sum", () => {
        const n = 160
        const points = progression(G1, n)
        fc.assert(
          fc.property(fc.array(scalar, { minLength: n, maxLength: n }), fc.integer({ min: 1, max: 3 }), (scalars, threads) => {
            const out = test("g1.msm", [concat(points.map(encodeG1)), concat(scalars.map(le))], [0, 0, threads], kernel)
            expect(decodeG1(out)).toEqual(G1.msm(points, scalars))
          }),
          { numRuns: 3 }
        )
      })

      it("roots of unity: ω_k has order exactly 2^k and is snarkjs's choice (5^t)^(2^(28-k))", () => {
        for (let k = 0; k <= 28; k++) {
          const w = fromLe(test("root", [], [k], kernel))
          expect(w).toBe(rootOfUnity(k))
          expect(pow(w, 1n << BigInt(k), R)).toBe(1n)
          if (k > 0) expect(pow(w, 1n << BigInt(k - 1), R)).toBe(R - 1n)
        }
      })

      it("NTT, inverse NTT and the odd-coset evaluation match the naive DFT", () => {
        fc.assert(
          fc.property(fc.integer({ min: 0, max: 6 }).chain((log) => fc.array(scalar, { minLength: 1 << log, maxLength: 1 << log })), (values) => {
            const n = values.length
            const log = Math.log2(n)
            const w = rootOfUnity(log)
            const run = (mode: number) => {
              const out = test("ntt", [concat(values.map(le))], [mode], kernel)
              return values.map((_, i) => fromLe(out, 32 * i))
            }
            expect(run(0)).toEqual(dft(values, w))
            const nInv = inv(BigInt(n), R)
            expect(run(1)).toEqual(dft(values, inv(w, R)).map((x) => mod(x * nInv, R)))
            // Evaluations on the domain → the same polynomial at shift·ω^j, shift = ω_2n (or 25 at 2^28).
            const shift = rootOfUnity(log + 1)
            const coefficients = dft(values, inv(w, R)).map((x) => mod(x * nInv, R))
            const atCoset = values.map((_, j) =>
              coefficients.reduce((s, c, i) => mod(s + c * pow(mod(shift * pow(w, BigInt(j), R), R), BigInt(i), R), R), 0n)
            )
            expect(run(2)).toEqual(atCoset)
          }),
          { numRuns: 40 }
        )
      })

      it("random scalars come from the OS, are below r and differ", () => {
        const draws = Array.from({ length: 64 }, () => fromLe(test("random", [], [], kernel)))
        for (const x of draws) expect(x < R).toBe(true)
        expect(new Set(draws).size).toBe(draws.length)
      })
    })
  }

  it("bad test arguments are errors with a code, never a crash", () => {
    expect(() => addon!.test("fq.mul", [le(Q), le(1n)], [])).toThrow(expect.objectContaining({ code: "MZK_INVALID_INPUT" }))
    expect(() => addon!.test("g1.add", [le(5n), le(5n)], [])).toThrow(/too short|not on the curve/)
    expect(() => addon!.test("g1.add", [concat([le(1n), le(3n)]), encodeG1(G1.generator)], [])).toThrow(/not on the curve/)
    expect(() => addon!.test("nope", [], [])).toThrow(/unknown op/)
    expect(() => addon!.test("fq.add", [], [], "no-such-kernel")).toThrow(/not available/)
  })
})
