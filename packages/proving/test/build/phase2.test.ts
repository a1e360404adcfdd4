// The native phase 2 (prover-native's phase2NewZkey): the key it writes from an r1cs and a prepared
// ptau is snarkjs's `zkey new` byte for byte; after the contribution snarkjs's own `zkey verify`
// accepts it and proofs on it verify; ptau files that cannot serve are refused with the reason.
// Here rather than in packages/prover-native because snarkjs lives in this package. The time limits
// are hang guards sized for a saturated 2-core machine (the whole file ran in 113 s there).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { loadNativeProver } from "@mzk/prover-native"
import * as snarkjs from "snarkjs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Circuit, makeCircuit } from "../fixtures/r1csFixture.js"
import { contributeNative } from "../../src/build/phase2.mjs"
import { makeTestPtau, makeUnpreparedTestPtau } from "../fixtures/universal.js"

const native = loadNativeProver()
const addon = native.ok ? native.addon : undefined
const needsAddon = process.env["CI"] === "true" ? describe : describe.skipIf(addon === undefined)


let work: string
let ptau: string
let unprepared: string
let otherCurve: string

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "mzk-phase2-test-"))
  unprepared = await makeUnpreparedTestPtau(work, 8)
  ptau = await makeTestPtau(work, 8)
  const bls = await snarkjs.curves.getCurveFromName("bls12381")
  otherCurve = join(work, "bls.ptau")
  await snarkjs.powersOfTau.newAccumulator(bls, 1, otherCurve)
}, 300_000)

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true })
})

const write = (name: string, bytes: Uint8Array) => {
  const file = join(work, name)
  writeFileSync(file, bytes)
  return file
}

const circuits: Record<string, Circuit> = {}
const circuit = (name: string) =>
  (circuits[name] ??=
    name === "small"
      ? makeCircuit({ nConstraints: 20, nVars: 12, nPublic: 2 })
      : makeCircuit({ nConstraints: 150, nVars: 90, nPublic: 3, heavy: true }))

needsAddon("native phase 2", () => {
  for (const name of ["small", "heavy"]) {
    it(`writes snarkjs's zkey byte for byte (${name} circuit)`, async () => {
      const c = circuit(name)
      const r1cs = write(`${name}.r1cs`, c.r1cs)
      const expected = join(work, `${name}.snarkjs.zkey`)
      await snarkjs.zKey.newZKey(r1cs, ptau, expected)
      const actual = join(work, `${name}.native.zkey`)
      const info = addon!.phase2NewZkey(r1cs, ptau, actual, { threads: 2 })
      const a = readFileSync(actual)
      const e = readFileSync(expected)
      expect(a.length).toBe(e.length)
      expect(Buffer.compare(a, e)).toBe(0)
      expect(info.domainSize).toBeGreaterThan(c.nConstraints)
    }, 180_000)
  }

  it("the kernels agree (generic and adx)", () => {
    const r1cs = write("k.r1cs", circuit("heavy").r1cs)
    const kernels = addon!.kernels
    const out = kernels.map((kernel) => {
      const file = join(work, `k.${kernel}.zkey`)
      addon!.phase2NewZkey(r1cs, ptau, file, { kernel })
      return readFileSync(file)
    })
    for (const o of out) expect(Buffer.compare(o, out[0]!)).toBe(0)
  })

  it("after the native contribution snarkjs verifies the key, and proofs on it verify", async () => {
    const c = circuit("heavy")
    const r1cs = write("p.r1cs", c.r1cs)
    const keys = [join(work, "p1.zkey"), join(work, "p2.zkey")]
    for (const key of keys) await contributeNative({ r1cs, ptau, zkey: key, threads: 2, name: "test" })
    for (const key of keys) expect(await snarkjs.zKey.verifyFromR1cs(r1cs, ptau, key)).toBe(true)
    // Fresh toxic waste each time: the two keys' δ differ.
    const vk1 = await snarkjs.zKey.exportVerificationKey(keys[0]!)
    const vk2 = await snarkjs.zKey.exportVerificationKey(keys[1]!)
    expect(vk1["vk_delta_2"]).not.toEqual(vk2["vk_delta_2"])
    const wtns = write("p.wtns", c.wtns)
    const js = await snarkjs.groth16.prove(keys[0]!, wtns)
    expect(js.publicSignals).toEqual(c.publicSignals)
    expect(await snarkjs.groth16.verify(vk1, js.publicSignals, js.proof)).toBe(true)
    const handle = addon!.loadZkey(readFileSync(keys[0]!))
    const nat = addon!.prove(handle, readFileSync(wtns))
    expect(nat.publicSignals).toEqual(c.publicSignals)
    expect(await snarkjs.groth16.verify(vk1, nat.publicSignals, nat.proof)).toBe(true)
    // A tampered public signal must not verify, or the checks above would prove nothing.
    const tampered = [String(BigInt(nat.publicSignals[0]!) + 1n), ...nat.publicSignals.slice(1)]
    expect(await snarkjs.groth16.verify(vk1, tampered, nat.proof)).toBe(false)
    expect(await snarkjs.groth16.verify(vk2, nat.publicSignals, nat.proof)).toBe(false)
  }, 300_000)

  describe("refuses a ptau that cannot serve, saying why", () => {
    const refused = (ptauFile: string, circuitName = "small") => {
      const r1cs = write(`r.${circuitName}.r1cs`, circuit(circuitName).r1cs)
      const out = join(work, "refused.zkey")
      try {
        addon!.phase2NewZkey(r1cs, ptauFile, out)
      } catch (e) {
        expect((e as { code?: string }).code).toBe("MZK_INVALID_INPUT")
        expect(() => readFileSync(out)).toThrow()
        return (e as Error).message
      }
      throw new Error("not refused")
    }
    it("another curve", () => expect(refused(otherCurve)).toMatch(/another curve/))
    it("not prepared for phase 2", () => expect(refused(unprepared)).toMatch(/not prepared for phase 2/))
    it("truncated", () => {
      const bytes = readFileSync(ptau)
      expect(refused(write("cut.ptau", bytes.subarray(0, bytes.length - 100)))).toMatch(/truncated: section 15 claims/)
      expect(refused(write("cut2.ptau", bytes.subarray(0, 20)))).toMatch(/truncated/)
    })
    it("too small for the circuit", () => {
      circuits["big"] = makeCircuit({ nConstraints: 300, nVars: 40, nPublic: 1 })
      expect(refused(ptau, "big")).toMatch(/too small for the circuit: 300 constraints \+ 1 public signals need a domain of 2\^9, the ptau has power 8/)
    })
    it("an r1cs over another field", () => {
      const bytes = Buffer.from(circuit("small").r1cs)
      bytes.writeUInt8(bytes.readUInt8(28) ^ 1, 28) // the first byte of the prime in the header section
      const out = join(work, "f.zkey")
      expect(() => addon!.phase2NewZkey(write("f.r1cs", bytes), ptau, out)).toThrow(/not BN254.s scalar field/)
    })
  })
})
