// checkZkeyPoints, the check of every point of an uploaded zkey, against the BigInt reference: a
// G2 point is accepted exactly when r·P is the point at infinity (points of G2, random points of
// the twist, G2 points plus points of each small order the twist has), G1 points exactly when on
// the curve, and every refusal names the section and the first bad point. On each kernel.
import { describe, expect, it } from "@effect/vitest"
import { loadNativeProver } from "@mzk/prover-native"
import fc from "fast-check"
import { concat, type F2, G2, inG2, le, mod, type Point, Q } from "./reference.js"
import { refusal as invalidInput } from "./expectations.js"
import { g1, g2, g2Candidate, nonCanonicalG1, pointOffset, TORSION, twistPoints, VALID_COUNT, VALID_KEY, zkeyG2, zkeyOf } from "./zkeyFixture.js"

const native = loadNativeProver()
const addon = native.ok ? native.addon : undefined

describe.skipIf(addon === undefined)("checkZkeyPoints", () => {
  const refusal = (f: () => unknown) => invalidInput(f, "the key was accepted")

  for (const kernel of addon?.kernels ?? []) {
    const check = (zkey: Uint8Array, threads = 1) => addon!.checkZkeyPoints(zkey, { kernel, threads })

    describe(`kernel ${kernel}`, () => {
      it("a B2 point is accepted exactly when r·P = O: G2, the twist, G2 plus points of order 10069, 5864401, …, infinity", () => {
        fc.assert(
          fc.property(g2Candidate, fc.integer({ min: 0, max: 5 }), (point, index) => {
            const key = zkeyOf({ ...VALID_KEY, b2: VALID_KEY.b2.map((p, i) => (i === index ? point : p)) })
            if (point === null || inG2(point)) {
              expect(check(key)).toEqual(VALID_COUNT)
            } else {
              expect(refusal(() => check(key))).toBe(
                `zkey: point ${index} of section 7 (B2 points) is on the twist but not in the r-order subgroup G2 (corrupt or crafted key)`
              )
            }
          }),
          { numRuns: 40 }
        )
      }, 120_000)

      it("every point of G2 plus a small-order point is refused, as β₂, γ₂, δ₂ and as a B2 point", () => {
        for (const t of TORSION) {
          const bad = G2.add(g2(987654321n), t)
          expect(inG2(bad)).toBe(false)
          for (const name of ["beta2", "gamma2", "delta2"] as const) {
            expect(refusal(() => check(zkeyOf({ ...VALID_KEY, [name]: bad })))).toBe(
              `zkey: ${name} (section 2, the header) is on the twist but not in the r-order subgroup G2 (corrupt or crafted key)`
            )
          }
          expect(refusal(() => check(zkeyOf({ ...VALID_KEY, b2: [...VALID_KEY.b2.slice(0, 5), bad] })))).toMatch(/^zkey: point 5 of section 7 /)
        }
      })

      it("a point off the curve or stored non-canonically is refused wherever it is, naming its section and index", () => {
        const off = { x: 1n, y: 3n }
        const g1Sections = [["ic", 3, "IC"], ["a", 5, "A points"], ["b1", 6, "B1 points"], ["c", 8, "C points"], ["h", 9, "H points"]] as const
        for (const [field, type, name] of g1Sections) {
          const points = VALID_KEY[field]
          const index = points.length - 1
          const key = zkeyOf({ ...VALID_KEY, [field]: points.map((p, i) => (i === index ? off : p)) })
          expect(refusal(() => check(key))).toBe(`zkey: point ${index} of section ${type} (${name}) is not on the curve or not canonical (corrupt key)`)
          const unreduced = zkeyOf(VALID_KEY)
          unreduced.set(nonCanonicalG1(points[0]!), pointOffset(unreduced, type, 0, 64))
          expect(refusal(() => check(unreduced))).toMatch(new RegExp(`^zkey: point 0 of section ${type} .* not canonical`))
        }
        const offTwist: Point<F2> = { x: [1n, 2n], y: [3n, 4n] }
        expect(G2.onCurve(offTwist)).toBe(false)
        expect(refusal(() => check(zkeyOf({ ...VALID_KEY, b2: [offTwist, ...VALID_KEY.b2.slice(1)] })))).toBe(
          "zkey: point 0 of section 7 (B2 points) is not on the curve or not canonical (corrupt key)"
        )
        for (const name of ["alpha1", "beta1", "delta1"] as const) {
          expect(refusal(() => check(zkeyOf({ ...VALID_KEY, [name]: off })))).toBe(`zkey: ${name} (section 2, the header) is not on the curve or not canonical (corrupt key)`)
          expect(refusal(() => check(zkeyOf({ ...VALID_KEY, [name]: null })))).toBe(`zkey: ${name} (section 2, the header) is the point at infinity`)
        }
        expect(refusal(() => check(zkeyOf({ ...VALID_KEY, delta2: offTwist })))).toMatch(/^zkey: delta2 .* not on the curve/)
        expect(refusal(() => check(zkeyOf({ ...VALID_KEY, delta2: null })))).toBe("zkey: delta2 (section 2, the header) is the point at infinity")
        // A coordinate of q + x: the same residue, not canonical.
        const key = zkeyOf(VALID_KEY)
        const at = pointOffset(key, 7, 0, 128)
        const p = VALID_KEY.b2[0]!
        key.set(zkeyG2(p), at)
        key.set(le(mod(p.x[0] * mod(1n << 256n, Q), Q) + Q), at)
        expect(refusal(() => check(key))).toMatch(/^zkey: point 0 of section 7 .* not canonical/)
      })

      it("threads share a large section and still name its first bad point", () => {
        const n = 1100
        const b2: Array<Point<F2>> = Array.from({ length: n }, (_, i) => VALID_KEY.b2[i % 6]!)
        const outside = twistPoints(2, 40n)
        b2[1050] = outside[0]!
        b2[700] = outside[1]!
        const key = zkeyOf({ ...VALID_KEY, a: Array(n).fill(g1(5n)), b1: Array(n).fill(g1(6n)), b2, c: Array(n - 2).fill(g1(7n)) })
        for (const threads of [1, 2, 3, 4]) expect(refusal(() => check(key, threads))).toMatch(/^zkey: point 700 of section 7 /)
        b2[700] = g2(8n)
        b2[1050] = null
        const good = zkeyOf({ ...VALID_KEY, a: Array(n).fill(g1(5n)), b1: Array(n).fill(g1(6n)), b2, c: Array(n - 2).fill(g1(7n)) })
        for (const threads of [1, 4]) expect(check(good, threads)).toEqual({ g1: 3 + 2 + 3 * n - 2 + 8, g2: 3 + n })
      }, 60_000)

      it("a key that is not a bn128 Groth16 key, or is cut short, is refused with a reason", () => {
        const good = zkeyOf(VALID_KEY)
        expect(refusal(() => check(good.slice(0, good.length - 10)))).toMatch(/truncated|claims/)
        const plonk = good.slice()
        plonk.set([2, 0, 0, 0], pointOffset(good, 1, 0, 4))
        expect(refusal(() => check(plonk))).toMatch(/not a Groth16 key/)
        const otherField = good.slice()
        otherField[pointOffset(good, 2, 0, 1) + 4] = otherField[pointOffset(good, 2, 0, 1) + 4]! ^ 1
        expect(refusal(() => check(otherField))).toMatch(/not a bn128 Groth16 key/)
        expect(() => addon!.checkZkeyPoints("zkey" as unknown as Uint8Array)).toThrow(/must be a Uint8Array/)
        expect(() => check(concat([good]), 0)).toThrow(/threads out of range/)
      })
    })
  }
})
