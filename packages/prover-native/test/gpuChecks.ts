// What the GPU arithmetic's test files share: the scalar generators and the planned-MSM checks,
// which are the same for G1 and G2 but for the group.
import { expect, it } from "@effect/vitest"
import fc from "fast-check"
import { concat, type Curve, le, type Point, R } from "./reference.js"

const TWO_254 = 1n << 254n

/** Scalars below 2^254, biased toward the edges of Fr and of the 254 bits. */
export const scalar254 = fc.oneof(
  fc.constantFrom(0n, 1n, 2n, R - 1n, R, R + 1n, TWO_254 - 1n, TWO_254 - 2n, 1n << 253n, (1n << 253n) - 1n),
  fc.bigInt({ min: TWO_254 - (1n << 64n), max: TWO_254 - 1n }),
  fc.bigInt({ min: 0n, max: 1n << 20n }),
  fc.bigInt({ min: 0n, max: TWO_254 - 1n })
)

/** Elements of Fr, biased toward 0, 1, 2 and r − 1. */
const scalarR = fc.oneof(fc.constantFrom(0n, 1n, 2n, R - 1n), fc.bigInt({ min: 0n, max: 1n << 20n }), fc.bigInt({ min: 0n, max: R - 1n }))

type Run = (op: string, args: ReadonlyArray<Uint8Array>, ints: ReadonlyArray<number>) => Uint8Array

export interface MsmGroup<T> {
  /** "g1" or "g2": the test addons' op names (`msm.g1`, `g1.msm`). */
  readonly name: "g1" | "g2"
  readonly curve: Curve<T>
  readonly encode: (p: Point<T>) => Uint8Array
  readonly decode: (b: Uint8Array) => Point<T>
  readonly randomPoint: fc.Arbitrary<Point<T>>
  /** The GPU schedule's entry point (`testGpu`), and the CPU prover's (`test`) where its addon loads. */
  readonly gpu: Run
  readonly cpu: Run | undefined
  /** Terms per MSM and property runs of each check: G2 is slower in the BigInt reference. */
  readonly runs: { readonly terms: number; readonly planned: number; readonly edgeTerms: number; readonly edge: number }
}

/** The planned MSM against the naive sum and the CPU prover's MSM, and the edge MSMs, in one group. */
export const msmScheduleChecks = <T>(g: MsmGroup<T>) => {
  const { curve } = g
  // Bases from a few distinct points, so repeats, P and −P, and infinity occur.
  const base = curve.mul(curve.generator, 0x1234567890abcdefn)
  const distinct = [base, curve.add(base, base), curve.neg(base), null, curve.mul(base, 7n), curve.generator]
  const terms = (points: ReadonlyArray<Point<T>>, scalars: ReadonlyArray<bigint>) => [concat(points.map(g.encode)), concat(scalars.map(le))]
  const msm = (points: ReadonlyArray<Point<T>>, scalars: ReadonlyArray<bigint>, c: number) => g.decode(g.gpu(`msm.${g.name}`, terms(points, scalars), [c]))

  it(`the planned ${g.name.toUpperCase()} MSM equals the naive sum and the CPU prover's (repeats, infinity, 0/1/r−1, widths 0..10)`, () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(scalarR, fc.integer({ min: 0, max: distinct.length - 1 })), { minLength: 0, maxLength: g.runs.terms }),
        fc.integer({ min: 0, max: 10 }),
        (pairs, c) => {
          const points = pairs.map(([, which]) => distinct[which]!)
          const scalars = pairs.map(([s]) => s)
          const expected = curve.msm(points, scalars)
          expect(msm(points, scalars, c)).toEqual(expected)
          if (g.cpu !== undefined && points.length > 0) expect(cpuMsm(points, scalars)).toEqual(expected)
        }
      ),
      { numRuns: g.runs.planned }
    )
  })

  it(`${g.name.toUpperCase()}: random points, scalars up to 2^254 − 1 (past r), and the edge MSMs: n = 0, n = 1, all zero`, () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(scalar254, g.randomPoint), { minLength: 1, maxLength: g.runs.edgeTerms }), fc.integer({ min: 1, max: 9 }), (pairs, c) => {
        const points = pairs.map(([, p]) => p)
        const scalars = pairs.map(([s]) => s)
        expect(msm(points, scalars, c)).toEqual(curve.msm(points, scalars))
      }),
      { numRuns: g.runs.edge }
    )
    for (const c of [0, 1, 4, 13]) {
      expect(msm([], [], c)).toBeNull()
      expect(msm([base], [1n], c)).toEqual(base)
      expect(msm([base], [R - 1n], c)).toEqual(curve.neg(base))
      expect(msm([base], [R], c)).toBeNull()
      expect(msm([base, curve.generator, null], [0n, 0n, 5n], c)).toBeNull()
    }
  })

  const cpuMsm = (points: ReadonlyArray<Point<T>>, scalars: ReadonlyArray<bigint>) => g.decode(g.cpu!(`${g.name}.msm`, terms(points, scalars), [0, 0, 1]))
  return { base, msm, cpuMsm }
}
