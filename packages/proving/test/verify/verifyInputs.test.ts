// The Verifier's checks before any pairing, next to the rules in src/verify/fields.ts and each
// system's module: field elements below their modulus (q − 1 read, q refused; r likewise), the
// point at infinity read as snarkjs writes it where a correct setup or prover makes one (a proof's
// points, Groth16's IC, PLONK's Qc of a circuit without constants: real snarkjs keys) and refused
// where none does (α₁ β₂ γ₂ δ₂, X_2), the affine (0, 0) refused as off the curve, a G2 point
// outside the r-order subgroup refused; each a VerifierInputInvalid naming its field; with
// snarkjs's modules and with Groth16 verified natively. The native Groth16 module answers as
// snarkjs's does: on real proofs and every changed signal, on keys and proofs made from random
// scalars and their mutations, past the 32 signals the addon keeps tables for, with points at
// infinity, and on a valid proof for a degenerate key (α₁ at infinity) that the addon will not
// prepare, which snarkjs then verifies.
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { loadNativeProver } from "@mzk/prover-native"
import { Effect } from "effect"
import fc from "fast-check"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as snarkjs from "snarkjs"
import { g1Json, groth16Instance } from "../../../prover-native/test/groth16Fixture.js"
import { G1, mod, Q, R } from "../../../prover-native/test/reference.js"
import { g1, twistPoints } from "../../../prover-native/test/zkeyFixture.js"
import { type AtInfinity, JsonReader } from "../../src/verify/fields.js"
import { groth16 } from "../../src/verify/groth16.js"
import { makeCircuit } from "../fixtures/r1csFixture.js"
import { makeTestPtau, type SnarkjsInstance, type UniversalSystem, universalInstance } from "../fixtures/universal.js"
import { makeVerifier, VERIFIER_MODULES, verifierModules } from "../../src/verify/index.js"
import { makeVerifyThread } from "../../src/verify/thread.js"

const file = (name: string) => new URL(`../../build/multiplier/${name}`, import.meta.url)
const key = JSON.parse(readFileSync(file("verification_key.json"), "utf8"))
const point = twistPoints(1, 100n)[0]!
const offSubgroup = [[point.x[0].toString(), point.x[1].toString()], [point.y[0].toString(), point.y[1].toString()], ["1", "0"]]
const native = loadNativeProver()
const addon = native.ok ? native.addon : undefined

const nativeThread = makeVerifyThread({ native: true })
const snarkjsThread = makeVerifyThread({ native: false })

let work: string
let universal: Record<UniversalSystem, SnarkjsInstance>
beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "mzk-verify-inputs-"))
  const ptau = await makeTestPtau(work, 8)
  // A circuit without constant terms: PLONK's Qc is the point at infinity.
  const circuit = makeCircuit({ nConstraints: 4, nVars: 9, nPublic: 2, constants: false })
  universal = { plonk: await universalInstance("plonk", ptau, circuit, work), fflonk: await universalInstance("fflonk", ptau, circuit, work) }
}, 120_000)

afterAll(async () => {
  await Promise.all([nativeThread.close(), snarkjsThread.close()])
  await (globalThis as { curve_bn128?: { terminate(): Promise<void> } | null }).curve_bn128?.terminate()
  rmSync(work, { recursive: true, force: true })
})

/** A key and a valid proof from scalars; `a = 0` puts α₁ at infinity. */
const instance = (a: bigint, seed: ReadonlyArray<bigint>, signals: ReadonlyArray<bigint>) => {
  const { vkey, proof, publicSignals, pa } = groth16Instance([a, ...seed], signals)
  return { key: vkey, proof, signals: publicSignals, pa }
}

const INFINITY_G1 = ["0", "1", "0"]
const INFINITY_G2 = [["0", "0"], ["1", "0"], ["0", "0"]]
const clone = <A>(value: A): A => JSON.parse(JSON.stringify(value))

/** What the reader notes of `value` read as a point of `group` that may or may not be at infinity. */
const readPoint = (group: "G1" | "G2", value: unknown, atInfinity: AtInfinity) => {
  const reader = new JsonReader()
  if (group === "G1") reader.g1({ p: value }, "p", "proof", atInfinity)
  else reader.g2({ p: value }, "p", "proof", atInfinity)
  return { problems: reader.problems, points: reader.points.length }
}

describe("snarkjs JSON as the Verifier reads it (fields.ts)", () => {
  it("a field element must be below its modulus: a coordinate equal to q, a signal or scalar equal to r are refused by path; q − 1 and r − 1 are read", () => {
    const reader = new JsonReader()
    expect(reader.element(Q.toString(), "proof.pi_a.0", Q, "base field element")).toBeUndefined()
    expect(reader.element((Q - 1n).toString(), "proof.pi_a.1", Q, "base field element")).toBe((Q - 1n).toString())
    expect(reader.scalar({ eval_a: R.toString() }, "eval_a", "proof")).toBeUndefined()
    expect(reader.scalar({ eval_b: (R - 1n).toString() }, "eval_b", "proof")).toBe((R - 1n).toString())
    reader.signals(["1", R.toString(), (R - 1n).toString()], 3)
    expect(reader.problems).toEqual([
      { path: "proof.pi_a.0", message: "is not a canonical base field element: it is not below the field's modulus" },
      { path: "proof.eval_a", message: "is not a canonical scalar field element: it is not below the field's modulus" },
      { path: "public_signals.1", message: "is not a canonical scalar field element: it is not below the field's modulus" }
    ])
  })

  it("a coordinate equal to q or a signal equal to r, in a whole request: a 400 naming it", () =>
    Effect.runPromise(Effect.gen(function*() {
      const { vkey, proof, publicSignals } = groth16Instance([3n, 5n, 7n, 11n, 13n, 17n, 19n], [42n, 43n])
      const verifier = makeVerifier()
      const refused = (k: unknown, p: unknown, s: ReadonlyArray<string>) => Effect.map(Effect.flip(verifier.prepare("groth16", k, p, s)), (e) => e.details.map((d) => d.path))
      expect(yield* refused(vkey, { ...proof, pi_c: [proof.pi_c[0], Q.toString(), "1"] }, publicSignals)).toEqual(["proof.pi_c.1"])
      const key = clone(vkey)
      key.vk_gamma_2[1]![0] = Q.toString()
      expect(yield* refused(key, proof, publicSignals)).toEqual(["verification_key.vk_gamma_2.1.0"])
      expect(yield* refused(vkey, proof, ["42", R.toString()])).toEqual(["public_signals.1"])
    })))

  it("the point at infinity as snarkjs writes it: read where a point may be at infinity, refused where it may not", () => {
    expect(readPoint("G1", INFINITY_G1, "allowed")).toEqual({ problems: [], points: 0 })
    expect(readPoint("G2", INFINITY_G2, "allowed")).toEqual({ problems: [], points: 0 })
    for (const [group, value] of [["G1", INFINITY_G1], ["G2", INFINITY_G2]] as const) {
      expect(readPoint(group, value, "refused").problems).toEqual([{ path: "proof.p", message: expect.stringMatching(/^is the point at infinity/) }])
    }
    // Other forms with z = 0 are not how snarkjs writes it.
    for (const value of [["0", "0", "0"], ["5", "7", "0"]]) {
      expect(readPoint("G1", value, "allowed").problems).toEqual([{ path: "proof.p", message: expect.stringContaining('the point at infinity ["0", "1", "0"]') }])
    }
    expect(readPoint("G2", [["0", "0"], ["0", "0"], ["0", "0"]], "allowed").problems).toEqual([{ path: "proof.p", message: expect.stringContaining("the point at infinity") }])
  })

  it("the affine (0, 0) is on neither curve: refused as not a point, in any form", () => {
    const notOnCurve = [{ path: "proof.p", message: expect.stringMatching(/^is not on the curve/) }]
    for (const atInfinity of ["allowed", "refused"] as const) {
      expect(readPoint("G1", ["0", "0", "1"], atInfinity).problems).toEqual(notOnCurve)
      expect(readPoint("G2", [["0", "0"], ["0", "0"], ["1", "0"]], atInfinity).problems).toEqual(notOnCurve)
    }
    expect(readPoint("G1", ["0", "0"], "allowed").problems).toEqual([{ path: "proof.p", message: "must be an array of 3" }])
  })
})

const moduleSets = [
  ["snarkjs's modules", VERIFIER_MODULES],
  ["the verification thread, Groth16 native", verifierModules(nativeThread)]
] as const

for (const [name, modules] of moduleSets) {
  describe(`the Verifier's input checks (${name})`, () => {
    it.live("refuses a G2 point outside the subgroup in a key or a proof, naming it; verifies the untouched proof, not a changed signal", () =>
      Effect.gen(function*() {
        const { proof, publicSignals } = yield* Effect.promise(() => snarkjs.groth16.fullProve({ a: 3, b: 11 }, file("multiplier.wasm").pathname, file("multiplier.zkey").pathname))
        const verifier = makeVerifier(modules)
        expect(yield* Effect.flatten(verifier.prepare("groth16", key, proof, publicSignals))).toBe(true)
        expect(yield* Effect.flatten(verifier.prepare("groth16", key, proof, ["34"]))).toBe(false)

        const badKey = yield* Effect.flip(verifier.checkKey("groth16", { ...key, vk_delta_2: offSubgroup }))
        expect(badKey.details).toEqual([{ path: "verification_key.vk_delta_2", message: expect.stringContaining("not in the r-order subgroup") }])
        const badProof = yield* Effect.flip(verifier.prepare("groth16", key, { ...proof, pi_b: offSubgroup }, publicSignals))
        expect(badProof.details).toEqual([{ path: "proof.pi_b", message: expect.stringContaining("not in the r-order subgroup G2 (corrupt or crafted proof)") }])
        const unsupported = yield* Effect.flip(verifier.checkKey("ultra_honk", key))
        expect(unsupported.details[0]!.path).toBe("proving_system")
      }), 120_000)

    it.live("Groth16: IC points and proof points at infinity are verified (valid proofs valid); α₁ β₂ γ₂ δ₂ at infinity, (0, 0) anywhere are 400s naming the field", () =>
      Effect.gen(function*() {
        const verifier = makeVerifier(modules)
        const run = (k: unknown, p: unknown, s: ReadonlyArray<string>) => Effect.flatten(verifier.prepare("groth16", k, p, s))
        const paths = (k: unknown, p: unknown, s: ReadonlyArray<string>) =>
          Effect.map(Effect.flip(verifier.prepare("groth16", k, p, s)), (e) => e.details.map((d) => [d.path, d.message]))
        // π_A at infinity, IC₀ and IC₂ at infinity (signal 1 bound by no constraint).
        const { vkey, proof, publicSignals } = groth16Instance([3n, 5n, 7n, 11n, 0n, 13n, 17n], [42n, 43n], { ic: [0n, 9n, 0n] })
        expect([proof.pi_a, vkey.IC[0], vkey.IC[2]]).toEqual([INFINITY_G1, INFINITY_G1, INFINITY_G1])
        expect(yield* verifier.checkKey("groth16", vkey)).toEqual({ n_public: 2 })
        expect(yield* run(vkey, proof, publicSignals)).toBe(true)
        expect(yield* run(vkey, proof, ["41", "43"])).toBe(false)
        // With π_A at infinity e(−π_A, π_B) = 1 for any π_B: also at infinity (which snarkjs's own
        // pairing gets wrong); π_C at infinity does not hold here.
        expect(yield* run(vkey, { ...proof, pi_b: INFINITY_G2 }, publicSignals)).toBe(true)
        expect(yield* run(vkey, { ...proof, pi_c: INFINITY_G1 }, publicSignals)).toBe(false)
        const usual = groth16Instance([3n, 5n, 7n, 11n, 13n, 17n, 19n], [42n])
        expect(yield* run(usual.vkey, usual.proof, usual.publicSignals)).toBe(true)
        for (const [field, infinity] of [["pi_a", INFINITY_G1], ["pi_b", INFINITY_G2], ["pi_c", INFINITY_G1]] as const) {
          expect(yield* run(usual.vkey, { ...usual.proof, [field]: infinity }, usual.publicSignals)).toBe(false)
        }

        for (const field of ["vk_alpha_1", "vk_beta_2", "vk_gamma_2", "vk_delta_2"]) {
          const degenerate = { ...vkey, [field]: field === "vk_alpha_1" ? INFINITY_G1 : INFINITY_G2 }
          expect(yield* paths(degenerate, proof, publicSignals)).toEqual([[`verification_key.${field}`, expect.stringMatching(/^is the point at infinity/)]])
        }
        const notOnCurve = expect.stringMatching(/^is not on the curve/)
        expect(yield* paths(vkey, { ...proof, pi_a: ["0", "0", "1"] }, publicSignals)).toEqual([["proof.pi_a", notOnCurve]])
        expect(yield* paths(vkey, { ...proof, pi_b: [["0", "0"], ["0", "0"], ["1", "0"]] }, publicSignals)).toEqual([["proof.pi_b", notOnCurve]])
        expect(yield* paths({ ...vkey, IC: [vkey.IC[0], ["0", "0", "1"], vkey.IC[2]] }, proof, publicSignals)).toEqual([["verification_key.IC.1", notOnCurve]])
      }), 60_000)

    it.live("PLONK and FFLONK keys snarkjs makes for a circuit without constants (Qc at infinity) are read and verify; X_2 at infinity is a 400", () =>
      Effect.gen(function*() {
        const verifier = makeVerifier(modules)
        const { plonk, fflonk } = universal
        const withProof = (system: UniversalSystem, proof: unknown) =>
          Effect.flatten(verifier.prepare(system, universal[system].key, proof, universal[system].signals))
        expect(plonk.key["Qc"]).toEqual(INFINITY_G1)
        for (const [system, made] of [["plonk", plonk], ["fflonk", fflonk]] as const) {
          const run = (k: unknown, p: unknown, s: ReadonlyArray<string>) => Effect.flatten(verifier.prepare(system, k, p, s))
          expect(yield* verifier.checkKey(system, made.key)).toEqual({ n_public: 2 })
          expect(yield* run(made.key, made.proof, made.signals)).toBe(true)
          const changed = [made.signals[0]!, ((BigInt(made.signals[1]!) + 1n) % R).toString()]
          expect(yield* run(made.key, made.proof, changed)).toBe(false)
          const refused = yield* Effect.flip(verifier.checkKey(system, { ...made.key, X_2: INFINITY_G2 }))
          expect(refused.details).toEqual([{ path: "verification_key.X_2", message: expect.stringMatching(/^is the point at infinity/) }])
        }
        // A proof's commitment at infinity is a point like any other: this proof no longer holds.
        expect(yield* withProof("plonk", { ...plonk.proof, Wxi: INFINITY_G1 })).toBe(false)
        expect(yield* withProof("fflonk", { ...fflonk.proof, polynomials: { ...fflonk.proof["polynomials"], W2: INFINITY_G1 } })).toBe(false)
        const zero = yield* Effect.flip(withProof("plonk", { ...plonk.proof, T3: ["0", "0", "1"] }))
        expect(zero.details).toEqual([{ path: "proof.T3", message: expect.stringMatching(/^is not on the curve/) }])
      }), 60_000)
  })
}

describe.skipIf(addon === undefined)("Groth16 verified natively on the verification thread answers as snarkjs does", () => {
  const both = async (k: unknown, signals: ReadonlyArray<string>, p: unknown) => {
    const [bySnarkjs, onThread] = await Promise.all([groth16.verify(k, signals, p), nativeThread.verify("groth16", k, signals, p)])
    return [bySnarkjs, onThread.valid, onThread.by] as const
  }

  it("a thread started without native verifies Groth16 with snarkjs", async () => {
    const { key: k, proof, signals } = instance(3n, [5n, 7n, 11n, 13n, 17n, 19n], [42n])
    expect(await snarkjsThread.verify("groth16", k, signals, proof)).toEqual({ valid: true, by: "snarkjs" })
    expect(await nativeThread.verify("groth16", k, signals, proof)).toEqual({ valid: true, by: "native" })
  })

  it("keys and proofs from random scalars: both accept the valid proof, both refuse a changed signal and a moved πa", async () => {
    const scalar = fc.bigInt({ min: 1n, max: R - 1n })
    await fc.assert(
      fc.asyncProperty(fc.array(scalar, { minLength: 6, maxLength: 6 }), scalar, fc.array(fc.bigInt({ min: 0n, max: R - 1n }), { maxLength: 3 }), async (seed, a, signals) => {
        const { key: k, proof, signals: s, pa } = instance(a, seed, signals)
        expect(await both(k, s, proof)).toEqual([true, true, "native"])
        if (s.length > 0) expect(await both(k, [mod(BigInt(s[0]!) + 1n, R).toString(), ...s.slice(1)], proof)).toEqual([false, false, "native"])
        expect(await both(k, s, { ...proof, pi_a: g1Json(G1.add(g1(pa), G1.generator)) })).toEqual([false, false, "native"])
      }),
      { numRuns: 4 }
    )
  }, 120_000)

  it("40 public signals, past the 32 the addon keeps tables for: both accept the valid proof, both refuse a signal changed on either side of 32", async () => {
    const signals = Array.from({ length: 40 }, (_, i) => BigInt(i) * 7919n + 3n)
    const { key: k, proof, signals: s } = instance(3n, [5n, 7n, 11n, 13n, 17n, 19n], signals)
    expect(await both(k, s, proof)).toEqual([true, true, "native"])
    for (const i of [5, 32, 39]) {
      expect(await both(k, s.map((v, j) => (j === i ? (BigInt(v) + 1n).toString() : v)), proof)).toEqual([false, false, "native"])
    }
  }, 60_000)

  it("IC points and π_A at infinity, as snarkjs writes them: both verify alike (a signal whose IC point is at infinity is unbound)", async () => {
    const signals = [4n, 5n, ...Array.from({ length: 32 }, (_, i) => BigInt(i + 9))]
    const ic = [0n, 0n, ...signals.slice(1).map((_, i) => (i === 32 ? 0n : BigInt(i + 31)))]
    const { vkey, proof, publicSignals } = groth16Instance([3n, 5n, 7n, 11n, 0n, 13n, 17n], signals, { ic })
    expect([proof.pi_a, vkey.IC[0], vkey.IC[1], vkey.IC[34]]).toEqual(Array(4).fill(["0", "1", "0"]))
    const change = (i: number) => publicSignals.map((v, j) => (j === i ? (BigInt(v) + 1n).toString() : v))
    expect(await both(vkey, publicSignals, proof)).toEqual([true, true, "native"])
    expect(await both(vkey, change(0), proof)).toEqual([true, true, "native"])
    expect(await both(vkey, change(33), proof)).toEqual([true, true, "native"])
    expect(await both(vkey, change(1), proof)).toEqual([false, false, "native"])
    expect(await both(vkey, change(32), proof)).toEqual([false, false, "native"])
  }, 60_000)

  it("more keys than the thread keeps prepared (8), in turn and again: each proof verifies under its own key only", async () => {
    const made = Array.from({ length: 12 }, (_, i) => instance(BigInt(i + 2), [3n, 5n + BigInt(i), 7n, 11n, 13n + BigInt(i), 17n], [BigInt(i)]))
    for (let round = 0; round < 2; round++) {
      for (const [i, { key: k, proof, signals }] of made.entries()) {
        expect(await nativeThread.verify("groth16", k, signals, proof)).toEqual({ valid: true, by: "native" })
        const other = made[(i + 1) % made.length]!
        expect(await nativeThread.verify("groth16", other.key, signals, proof)).toEqual({ valid: false, by: "native" })
      }
    }
  }, 120_000)

  it("a valid proof for a key with α₁ at infinity, which the addon will not prepare, is left to snarkjs: valid (the Verifier's checks refuse such a key first)", async () => {
    const { key: k, proof, signals } = instance(0n, [5n, 7n, 11n, 13n, 17n, 19n], [42n])
    expect(() => addon!.prepareVerifyingKey(k as never)).toThrow(/infinity/)
    expect(await both(k, signals, proof)).toEqual([true, true, "snarkjs"])
    const refused = await Effect.runPromise(Effect.flip(makeVerifier(verifierModules(nativeThread)).checkKey("groth16", k)))
    expect(refused.details).toEqual([{ path: "verification_key.vk_alpha_1", message: expect.stringContaining("is the point at infinity") }])
  }, 60_000)
})
