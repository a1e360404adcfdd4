// The Verifier's checks before any pairing: a G2 point on the twist but outside the r-order
// subgroup, in a key or a proof, is a VerifierInputInvalid naming its field (snarkjs itself checks
// G1 points on the curve, not G2 subgroup membership); with snarkjs's modules and with Groth16
// verified natively. The native Groth16 module answers as snarkjs's does: on real proofs and every
// changed signal, on keys and proofs made from random scalars and their mutations, and on a valid
// proof for a degenerate key (α₁ at infinity) that the addon will not prepare, which snarkjs then
// verifies.
import { afterAll, describe, expect, it } from "@effect/vitest"
import { loadNativeProver } from "@mzk/prover-native"
import { Effect } from "effect"
import fc from "fast-check"
import { readFileSync } from "node:fs"
import * as snarkjs from "snarkjs"
import { g1Json, groth16Instance } from "../../packages/prover-native/test/groth16Fixture.js"
import { G1, mod, R } from "../../packages/prover-native/test/reference.js"
import { g1, twistPoints } from "../../packages/prover-native/test/zkeyFixture.js"
import { groth16 } from "../src/verify/groth16.js"
import { makeVerifier, VERIFIER_MODULES, verifierModules } from "../src/verify/index.js"
import { makeVerifyThread } from "../src/verify/thread.js"

const file = (name: string) => new URL(`../build/multiplier/${name}`, import.meta.url)
const key = JSON.parse(readFileSync(file("verification_key.json"), "utf8"))
const point = twistPoints(1, 100n)[0]!
const offSubgroup = [[point.x[0].toString(), point.x[1].toString()], [point.y[0].toString(), point.y[1].toString()], ["1", "0"]]
const native = loadNativeProver()
const addon = native.ok ? native.addon : undefined

const nativeThread = makeVerifyThread({ native: true })
const snarkjsThread = makeVerifyThread({ native: false })

afterAll(async () => {
  await Promise.all([nativeThread.close(), snarkjsThread.close()])
  await (globalThis as { curve_bn128?: { terminate(): Promise<void> } | null }).curve_bn128?.terminate()
})

/** A key and a valid proof from scalars; `a = 0` puts α₁ at infinity. */
const instance = (a: bigint, seed: ReadonlyArray<bigint>, signals: ReadonlyArray<bigint>) => {
  const { vkey, proof, publicSignals, pa } = groth16Instance([a, ...seed], signals)
  return { key: vkey, proof, signals: publicSignals, pa }
}

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
    expect(refused.details).toEqual([{ path: "verification_key.vk_alpha_1", message: expect.stringContaining("must be an affine point") }])
  }, 60_000)
})
