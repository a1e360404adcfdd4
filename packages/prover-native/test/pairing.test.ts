// The BN254 pairing and the Groth16 verifier against the BigInt reference (reference.ts): points are
// made there, as multiples of the generators, so the scalars behind them are known. The pairing is
// bilinear (e(aP, bQ) = e(P, Q)^ab = e(abP, Q)) and non-degenerate; a product of pairings is 1 exactly
// when the scalars say so (and not when one is off by one). verifyGroth16 accepts a proof built
// from scalars that satisfy the Groth16 equation and refuses every mutation of it: a changed signal,
// a changed proof point, a signal ≥ r, the wrong number of signals, a point off its curve, π_B on
// the twist but outside G2 (also where the pairing equation holds: π_A at infinity), malformed
// shapes and strings (false, never a crash); past the 32 signals it keeps tables for, and with IC
// points at infinity, it answers the same. On each kernel.
// Real circuits' proofs, checked against snarkjs, are in packages/proving/test/verify/verify.test.ts.
import { describe, expect, it } from "@effect/vitest"
import { loadNativeProver } from "@mzk/prover-native"
import { loadNativeTesting } from "@mzk/prover-native/testing"
import fc from "fast-check"
import { concat, encodeG1, encodeG2, type F2, G1, G2, inG2, le, mod, type Point, Q, R } from "./reference.js"
import { g1Json, g2Json, groth16Instance } from "./groth16Fixture.js"
import { g1, g2, TORSION, twistPoints } from "./zkeyFixture.js"

const native = loadNativeProver()
const addon = native.ok ? native.addon : undefined
// The pairing's test entry points are in the test addon, built beside the production one.
const testing = native.ok ? loadNativeTesting() : undefined
const testOps = testing?.ok ? testing.addon : undefined

const scalar = fc.bigInt({ min: 1n, max: R - 1n })

describe.skipIf(testOps === undefined)("the BN254 pairing", () => {
  for (const kernel of testOps?.kernels ?? []) {
    describe(`kernel ${kernel}`, () => {
      const e = (p: Point<bigint>, q: Point<F2>) => testOps!.test("pairing.e", [encodeG1(p), encodeG2(q)], [], kernel)
      const check = (pairs: ReadonlyArray<readonly [Point<bigint>, Point<F2>]>) =>
        testOps!.test("pairing.check", [concat(pairs.map(([p]) => encodeG1(p))), concat(pairs.map(([, q]) => encodeG2(q)))], [], kernel)[0] === 1
      const fq12Pow = (f: Uint8Array, k: bigint) => testOps!.test("fq12.pow", [f, le(k)], [], kernel)
      const ONE = concat([le(1n), new Uint8Array(11 * 32)])

      it("is bilinear: e(aP, bQ) = e(P, Q)^ab = e(abP, Q), and e(P, Q) ≠ 1", () => {
        const P = G1.generator
        const Qg = G2.generator
        const base = e(P, Qg)
        expect(base).not.toEqual(ONE)
        // e(P, Q) has order r: e(P, Q)^r = 1.
        expect(fq12Pow(fq12Pow(base, R - 1n), 1n)).not.toEqual(ONE)
        expect(testOps!.test("fq12.mul", [fq12Pow(base, R - 1n), base], [], kernel)).toEqual(ONE)
        fc.assert(
          fc.property(scalar, scalar, (a, b) => {
            const ab = mod(a * b, R)
            const lhs = e(g1(a), g2(b))
            expect(lhs).toEqual(fq12Pow(base, ab))
            expect(lhs).toEqual(e(g1(ab), Qg))
            expect(lhs).toEqual(e(P, g2(ab)))
          }),
          { numRuns: 6 }
        )
      }, 120_000)

      it("a product of pairings is 1 exactly when the scalars cancel: e(aP, bQ)·e(−abP, Q) = 1, off by one ≠ 1", () => {
        fc.assert(
          fc.property(scalar, scalar, scalar, (a, b, c) => {
            const ab = mod(a * b, R)
            expect(check([[g1(a), g2(b)], [g1(mod(-ab, R)), G2.generator]])).toBe(true)
            expect(check([[g1(a), g2(b)], [g1(mod(-ab - 1n, R)), G2.generator]])).toBe(false)
            expect(check([[g1(a), g2(b)], [g1(mod(-ab + 1n, R)), G2.generator]])).toBe(false)
            // Three terms: e(aP, bQ)·e(cP, −bQ)·e((c − a)bP, Q) = 1.
            expect(check([[g1(a), g2(b)], [g1(c), g2(mod(-b, R))], [g1(mod((c - a) * b, R)), G2.generator]])).toBe(true)
            expect(check([[g1(a), g2(b)]])).toBe(false)
          }),
          { numRuns: 5 }
        )
        // The point at infinity contributes 1.
        expect(check([[null, G2.generator]])).toBe(true)
        expect(check([[G1.generator, null]])).toBe(true)
      }, 120_000)
    })
  }
})

describe.skipIf(addon === undefined)("verifyGroth16", () => {
  for (const kernel of addon?.kernels ?? []) {
    describe(`kernel ${kernel}`, () => {
      const signalsArb = fc.array(fc.bigInt({ min: 0n, max: R - 1n }), { minLength: 0, maxLength: 3 })
      const seedArb = fc.array(scalar, { minLength: 7, maxLength: 7 })

      it("accepts a valid proof and refuses every mutation of it", () => {
        fc.assert(
          fc.property(seedArb, signalsArb, (seed, signals) => {
            const { vkey, proof, publicSignals, pa, pb, pc } = groth16Instance(seed, signals)
            const key = addon!.prepareVerifyingKey(vkey, { kernel })
            const verify = (p: unknown, s: unknown) => addon!.verifyGroth16(key, p as never, s as never)
            expect(verify(proof, publicSignals)).toBe(true)
            // Signals: each changed, one ≥ r (the same residue plus r), one too many, one too few.
            for (let i = 0; i < signals.length; i++) {
              const changed = publicSignals.map((s, j) => (j === i ? mod(BigInt(s) + 1n, R).toString() : s))
              expect(verify(proof, changed)).toBe(false)
              expect(verify(proof, publicSignals.map((s, j) => (j === i ? (BigInt(s) + R).toString() : s)))).toBe(false)
            }
            expect(verify(proof, [...publicSignals, "0"])).toBe(false)
            if (signals.length > 0) expect(verify(proof, publicSignals.slice(1))).toBe(false)
            // Proof points: another point of the group (each moved by the generator, so never the point
            // it was), swapped (when the two differ), a coordinate perturbed (off the curve).
            if (pa !== pc) expect(verify({ ...proof, pi_a: proof.pi_c, pi_c: proof.pi_a }, publicSignals)).toBe(false)
            expect(verify({ ...proof, pi_a: g1Json(G1.add(g1(pa), G1.generator)) }, publicSignals)).toBe(false)
            expect(verify({ ...proof, pi_b: g2Json(G2.add(g2(pb), G2.generator)) }, publicSignals)).toBe(false)
            expect(verify({ ...proof, pi_c: g1Json(G1.add(g1(pc), G1.generator)) }, publicSignals)).toBe(false)
            for (const name of ["pi_a", "pi_c"] as const) {
              // πc is at infinity when the scalars solve to 0; its x and y say nothing there (z = 0).
              if (proof[name][2] === "0") continue
              for (const k of [0, 1]) {
                const bumped = proof[name].map((c, j) => (j === k ? mod(BigInt(c) + 1n, Q).toString() : c))
                expect(verify({ ...proof, [name]: bumped }, publicSignals)).toBe(false)
              }
            }
            for (const [i, j] of [[0, 0], [0, 1], [1, 0], [1, 1]] as const) {
              const bumped = proof.pi_b.map((c, m) => (m === i ? c.map((v, n) => (n === j ? mod(BigInt(v) + 1n, Q).toString() : v)) : c))
              expect(verify({ ...proof, pi_b: bumped }, publicSignals)).toBe(false)
            }
            // A coordinate ≥ q (the same residue plus q) is refused, not reduced.
            expect(verify({ ...proof, pi_a: [(BigInt(proof.pi_a[0]!) + Q).toString(), proof.pi_a[1], "1"] }, publicSignals)).toBe(false)
          }),
          // CI's counterexample: πa = 2·G1 (what a fixed "another point" once equalled) and πc at infinity.
          { numRuns: 4, examples: [[[1n, 1n, 1n, 1n, 2n, 1n, 1n], []]] }
        )
      }, 180_000)

      it("accepts the same proof in projective form (z ≠ 1), as snarkjs reads it", () => {
        const { vkey, proof, publicSignals } = groth16Instance([3n, 5n, 7n, 11n, 13n, 17n, 19n], [42n])
        const key = addon!.prepareVerifyingKey(vkey, { kernel })
        const z = 123456789n
        const [x, y] = [BigInt(proof.pi_a[0]!), BigInt(proof.pi_a[1]!)]
        const jacobian = [mod(x * z * z, Q).toString(), mod(y * z * z * z, Q).toString(), z.toString()]
        expect(addon!.verifyGroth16(key, { ...proof, pi_a: jacobian } as never, publicSignals)).toBe(true)
        expect(addon!.verifyGroth16(key, { ...proof, pi_a: [proof.pi_a[0], proof.pi_a[1]] } as never, publicSignals)).toBe(true)
      })

      it("refuses π_B on the twist but outside G2 (G2 plus a point of small order, and points of the whole twist)", () => {
        const { vkey, proof, publicSignals, pb } = groth16Instance([3n, 5n, 7n, 11n, 13n, 17n, 19n], [42n])
        const key = addon!.prepareVerifyingKey(vkey, { kernel })
        for (const t of [...TORSION, ...twistPoints(3, 1000n)]) {
          const bad = G2.add(g2(pb), t)
          expect(G2.onCurve(bad)).toBe(true)
          expect(addon!.verifyGroth16(key, { ...proof, pi_b: g2Json(bad) } as never, publicSignals)).toBe(false)
        }
      })

      it("refuses π_B outside G2 where the pairing equation holds: π_A at infinity, π_B a valid point plus one of small order", () => {
        // With π_A = O, e(−A, B) = 1 whatever B is: the equation holds for any π_B, so only the
        // check that π_B lies in G2 refuses these.
        const { vkey, proof, publicSignals, pb } = groth16Instance([3n, 5n, 7n, 11n, 0n, 13n, 17n], [42n])
        expect(proof.pi_a).toEqual(["0", "1", "0"])
        const key = addon!.prepareVerifyingKey(vkey, { kernel })
        const verify = (b: Point<F2>) => addon!.verifyGroth16(key, { ...proof, pi_b: g2Json(b) } as never, publicSignals)
        expect(verify(g2(pb))).toBe(true)
        expect(verify(g2(pb + 1n))).toBe(true)
        for (const t of TORSION) {
          const outside = G2.add(g2(pb), t)
          expect([G2.onCurve(outside), inG2(outside)]).toEqual([true, false])
          expect(verify(outside)).toBe(false)
        }
      })

      it("past the first 32 public signals (no tables there): a valid proof of 40 accepted, each signal changed refused", () => {
        const signals = Array.from({ length: 40 }, (_, i) => mod(BigInt(i) * 1_000_003n + 7n, R))
        const { vkey, proof, publicSignals } = groth16Instance([3n, 5n, 7n, 11n, 13n, 17n, 19n], signals)
        const key = addon!.prepareVerifyingKey(vkey, { kernel })
        expect(addon!.verifyGroth16(key, proof as never, publicSignals)).toBe(true)
        for (const i of [0, 31, 32, 33, 38, 39]) {
          const changed = publicSignals.map((s, j) => (j === i ? mod(BigInt(s) + 1n, R).toString() : s))
          expect(addon!.verifyGroth16(key, proof as never, changed), `signal ${i} changed`).toBe(false)
        }
      })

      it("IC points at infinity (signals no constraint binds), at and past the tables: verified, each such signal left unbound", () => {
        const signals = Array.from({ length: 36 }, (_, i) => BigInt(i + 2))
        const ic = [0n, ...signals.map((_, i) => (i === 3 || i === 34 ? 0n : BigInt(i + 101)))]
        const { vkey, proof, publicSignals } = groth16Instance([3n, 5n, 7n, 11n, 13n, 17n, 19n], signals, { ic })
        expect([vkey.IC[0], vkey.IC[4], vkey.IC[35]]).toEqual([["0", "1", "0"], ["0", "1", "0"], ["0", "1", "0"]])
        const key = addon!.prepareVerifyingKey(vkey, { kernel })
        const verify = (changedAt: number) =>
          addon!.verifyGroth16(key, proof as never, publicSignals.map((s, j) => (j === changedAt ? mod(BigInt(s) + 1n, R).toString() : s)))
        expect(verify(-1)).toBe(true)
        // Signals 3 and 34 meet IC points at infinity: as in snarkjs, their value does not count.
        expect([verify(3), verify(34)]).toEqual([true, true])
        expect([verify(2), verify(33)]).toEqual([false, false])
      })

      it("malformed proofs and signals are simply not valid (false), never a crash", () => {
        const { vkey, proof, publicSignals } = groth16Instance([3n, 5n, 7n, 11n, 13n, 17n, 19n], [42n, 43n])
        const key = addon!.prepareVerifyingKey(vkey, { kernel })
        const malformed: ReadonlyArray<readonly [unknown, unknown]> = [
          [null, publicSignals],
          [proof, null],
          [proof, "42"],
          [{}, publicSignals],
          [{ ...proof, pi_a: "1" }, publicSignals],
          [{ ...proof, pi_a: ["1", "2", "1", "4"] }, publicSignals],
          [{ ...proof, pi_a: ["x", "2", "1"] }, publicSignals],
          [{ ...proof, pi_a: ["-1", "2", "1"] }, publicSignals],
          [{ ...proof, pi_a: ["", "2", "1"] }, publicSignals],
          [{ ...proof, pi_a: ["1".repeat(100), "2", "1"] }, publicSignals],
          [{ ...proof, pi_a: [(1n << 256n).toString(), "2", "1"] }, publicSignals],
          [{ ...proof, pi_b: [["1", "2"], ["3"]] }, publicSignals],
          [{ ...proof, pi_b: proof.pi_a }, publicSignals],
          [{ ...proof, pi_c: { 0: "1", 1: "2" } }, publicSignals],
          [proof, ["42", { n: 43 }]],
          [proof, ["42", "4.3"]],
          [proof, ["42", -43]],
          [proof, ["42", 1.5]],
          [proof, ["42", "0x2b00000000000000000000000000000000000000000000000000000000000000000"]]
        ]
        for (const [p, s] of malformed) expect(addon!.verifyGroth16(key, p as never, s as never)).toBe(false)
        // Numbers and hexadecimal strings are read as snarkjs reads them.
        expect(addon!.verifyGroth16(key, proof as never, [42, "0x2b"] as never)).toBe(true)
        expect(() => addon!.verifyGroth16({} as never, proof as never, publicSignals)).toThrow(
          expect.objectContaining({ code: "MZK_INVALID_INPUT" })
        )
      })

      it("a verification key with a bad point or shape is refused with MZK_INVALID_INPUT naming the field", () => {
        const { vkey } = groth16Instance([3n, 5n, 7n, 11n, 13n, 17n, 19n], [42n])
        const refusal = (v: unknown) => {
          try {
            addon!.prepareVerifyingKey(v as never, { kernel })
          } catch (error) {
            expect((error as { code?: string }).code).toBe("MZK_INVALID_INPUT")
            return (error as Error).message
          }
          throw new Error("the key was accepted")
        }
        const outside = G2.add(g2(5n), TORSION[0]!)
        expect(refusal({ ...vkey, vk_gamma_2: g2Json(outside) })).toBe(
          "verification key: vk_gamma_2 is on the twist but not in the r-order subgroup G2"
        )
        expect(refusal({ ...vkey, vk_alpha_1: ["1", "3", "1"] })).toMatch(/^verification key: vk_alpha_1 is not a point of the curve/)
        expect(refusal({ ...vkey, vk_delta_2: g2Json(null) })).toBe("verification key: vk_delta_2 is the point at infinity")
        expect(refusal({ ...vkey, IC: [vkey.IC[0], ["1", "3", "1"]] })).toMatch(/^verification key: IC\[1\] is not a point/)
        expect(refusal({ ...vkey, IC: [] })).toMatch(/^verification key: IC must be/)
        expect(refusal({ ...vkey, nPublic: 2 })).toMatch(/^verification key: nPublic does not match IC/)
        expect(refusal({ ...vkey, curve: "bls12381" })).toMatch(/^verification key: curve must be/)
        expect(refusal({ ...vkey, vk_beta_2: ["1", "2"] })).toMatch(/^verification key: vk_beta_2 is not a G2 point/)
        expect(refusal("{}")).toMatch(/^verification key: expected/)
      })
    })
  }
})
