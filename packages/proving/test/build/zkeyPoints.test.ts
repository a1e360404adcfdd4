// The point check of uploaded zkeys on both engines: its JavaScript twin (ffjavascript's curve,
// where the native addon is not built) against the BigInt reference, as the native check is in
// packages/prover-native/test/points.test.ts, and both engines on the built-in keys and on copies
// with one byte corrupted in a G1 point, a B2 point and δ₂: the same answer, the same message.
import { afterAll, describe, expect, it } from "@effect/vitest"
import { loadNativeProver } from "@mzk/prover-native"
import fc from "fast-check"
import { readFileSync } from "node:fs"
import { inG2 } from "../../../prover-native/test/reference.js"
import { g2Candidate, pointOffset, VALID_COUNT, VALID_KEY, zkeyOf } from "../../../prover-native/test/zkeyFixture.js"
import { buildFilesOf } from "../../src/catalog.js"
import { checkZkeyPoints, checkZkeyPointsJs } from "../../src/build/zkeyPoints.mjs"

const native = loadNativeProver()
const addon = native.ok ? native.addon : undefined

afterAll(async () => {
  await (globalThis as { curve_bn128?: { terminate(): Promise<void> } | null }).curve_bn128?.terminate()
})

const refusal = async (check: Promise<unknown>) => {
  try {
    await check
  } catch (e) {
    return (e as Error).message
  }
  throw new Error("the key was accepted")
}

/** A built-in key with one byte of one point flipped. */
const corrupt = (name: string, section: number, size: number, index: (zkey: Uint8Array) => number) => {
  const zkey = new Uint8Array(readFileSync(buildFilesOf(name).zkey))
  const at = section === 2 ? index(zkey) : pointOffset(zkey, section, index(zkey), size)
  zkey[at + 7] = zkey[at + 7]! ^ 0x20
  return zkey
}
/** The first point of a section that is not the point at infinity (snarkjs writes zeros for absent ones). */
const firstPresent = (section: number, size: number) => (zkey: Uint8Array) => {
  for (let i = 0; ; i++) {
    const at = pointOffset(zkey, section, i, size)
    if (zkey.subarray(at, at + size).some((b) => b !== 0)) return i
  }
}
/** δ₂ in the header (section 2): after the fields, the counts, α₁, β₁, β₂, γ₂ and δ₁. */
const delta2 = (zkey: Uint8Array) => pointOffset(zkey, 2, 0, 1) + 4 + 32 + 4 + 32 + 12 + 64 + 64 + 128 + 128 + 64

describe("the zkey point check in JavaScript", () => {
  it("accepts a B2 point exactly when r·P = O (BigInt reference): G2, the twist, G2 plus small-order points", async () => {
    await fc.assert(
      fc.asyncProperty(g2Candidate, fc.integer({ min: 0, max: 5 }), async (point, index) => {
        const key = zkeyOf({ ...VALID_KEY, b2: VALID_KEY.b2.map((p, i) => (i === index ? point : p)) })
        if (point === null || inG2(point)) expect(await checkZkeyPointsJs(key)).toEqual(VALID_COUNT)
        else expect(await refusal(checkZkeyPointsJs(key))).toMatch(new RegExp(`^zkey: point ${index} of section 7 \\(B2 points\\) is on the twist but not in the r-order subgroup G2`))
      }),
      { numRuns: 20 }
    )
  }, 120_000)

  const corrupted = [
    ["delta2", corrupt("range", 2, 0, delta2), /^zkey: delta2 \(section 2, the header\) is not on the curve/],
    ["a B2 point", corrupt("range", 7, 128, firstPresent(7, 128)), /^zkey: point \d+ of section 7 \(B2 points\) is not on the curve/],
    ["an A point", corrupt("range", 5, 64, firstPresent(5, 64)), /^zkey: point \d+ of section 5 \(A points\) is not on the curve/],
    ["an H point", corrupt("multiplier", 9, 64, () => 3), /^zkey: point 3 of section 9 \(H points\) is not on the curve/]
  ] as const

  for (const [what, zkey, message] of corrupted) {
    it(`refuses a built-in key with a byte of ${what} flipped, with the native check's message`, async () => {
      const js = await refusal(checkZkeyPointsJs(zkey))
      expect(js).toMatch(message)
      if (addon !== undefined) expect(await refusal(checkZkeyPoints(zkey, { addon, threads: 2 }))).toBe(js)
    })
  }

  it("accepts the built-in keys, counting the same points as the native check", async () => {
    for (const name of ["multiplier", "range", "hash_preimage"]) {
      const zkey = new Uint8Array(readFileSync(buildFilesOf(name).zkey))
      const counted = await checkZkeyPointsJs(zkey)
      expect(counted.g2).toBeGreaterThan(3)
      if (addon !== undefined) expect(await checkZkeyPoints(zkey, { addon, threads: 2 })).toEqual(counted)
    }
  }, 60_000)
})
