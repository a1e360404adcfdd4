// The snarkjs Verifier's checks before any pairing: a G2 point on the twist but outside the
// r-order subgroup, in a key or a proof, is a VerifierInputInvalid naming its field (snarkjs
// itself checks G1 points on the curve, not G2 subgroup membership).
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { readFileSync } from "node:fs"
import * as snarkjs from "snarkjs"
import { twistPoints } from "../../packages/prover-native/test/zkeyFixture.js"
import { makeSnarkjsVerifier } from "../src/verify/index.js"

const file = (name: string) => new URL(`../build/multiplier/${name}`, import.meta.url)
const key = JSON.parse(readFileSync(file("verification_key.json"), "utf8"))
const point = twistPoints(1, 100n)[0]!
const offSubgroup = [[point.x[0].toString(), point.x[1].toString()], [point.y[0].toString(), point.y[1].toString()], ["1", "0"]]

afterAll(async () => {
  await (globalThis as { curve_bn128?: { terminate(): Promise<void> } | null }).curve_bn128?.terminate()
})

describe("the snarkjs Verifier's input checks", () => {
  it.live("refuses a G2 point outside the subgroup in a key or a proof, naming it; verifies the untouched proof", () =>
    Effect.gen(function*() {
      const { proof, publicSignals } = yield* Effect.promise(() => snarkjs.groth16.fullProve({ a: 3, b: 11 }, file("multiplier.wasm").pathname, file("multiplier.zkey").pathname))
      const verifier = makeSnarkjsVerifier()
      expect(yield* Effect.flatten(verifier.prepare("groth16", key, proof, publicSignals))).toBe(true)

      const badKey = yield* Effect.flip(verifier.checkKey("groth16", { ...key, vk_delta_2: offSubgroup }))
      expect(badKey.details).toEqual([{ path: "verification_key.vk_delta_2", message: expect.stringContaining("not in the r-order subgroup") }])
      const badProof = yield* Effect.flip(verifier.prepare("groth16", key, { ...proof, pi_b: offSubgroup }, publicSignals))
      expect(badProof.details).toEqual([{ path: "proof.pi_b", message: expect.stringContaining("not in the r-order subgroup G2 (corrupt or crafted proof)") }])
      const unsupported = yield* Effect.flip(verifier.checkKey("ultra_honk", key))
      expect(unsupported.details[0]!.path).toBe("proving_system")
    }), 120_000)
})
