import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { functionSelector, groth16Calldata } from "../../src/proofs/calldata.js"
import type { Groth16Proof } from "../../src/proofs/proof.js"

// A real proof of the built-in `range` circuit (value 42 in [10, 100]) and what snarkjs 0.7.6's
// groth16.exportSolidityCallData printed for it. packages/proving/test/solidity/solidity.test.ts repeats the
// comparison live against snarkjs and runs the calldata through the exported verifier in an EVM.
const proof: Groth16Proof = {
  pi_a: [
    "12853066731654485033971125785617912519367718428451715846259656989881335547670",
    "14646318397528689671631629214790969464395054087590745408057571261903784489651",
    "1"
  ],
  pi_b: [
    [
      "5085231008155233718370255678312348755979588402733305513291354387521018871771",
      "14405008598472563791936416120687366262980617595162593612291734292373587811977"
    ],
    [
      "16277661185643232832001985657935127163869019125629081070726878359414689770651",
      "18603291898056872290090704613252026918939776155978526478739614428612482634570"
    ],
    ["1", "0"]
  ],
  pi_c: [
    "7460958553958503566635599038885665071010674323042504440948377969497871623579",
    "17305584423779888217127850318057054708775866765172981531334015935778824882924",
    "1"
  ],
  protocol: "groth16",
  curve: "bn128"
}
const publicSignals = ["10", "100"]
const snarkjsCallData =
  `["0x1c6a93f5c332572afd7c16a55366a2ee41ca024f79d5e8097e8ada9563f40716", "0x206185bed9b3a70cd09862e094ebc8769f1973cba80aa866d5561d57ce0db2b3"],[["0x1fd8f228f10c73b42f744d3895f4869b6e40761a55fc357d70a1da0ef726de89", "0x0b3e238554c6c38d87a1dd883b198ac7f7cbb36e894b08b372ce514e9d753fdb"],["0x2921170f5024b7578b1cee6545ff5936279c2d4da1e8fb0ef04406671549134a", "0x23fcd469e2ccd264878daeb07fbc079e17a6f37050cabc2475488f98b00c2c9b"]],["0x107ec0bd956b45e9189ec9641f1d0a55df0786fffd712b7cb1fa0375c1e2259b", "0x26429d19dbf7acb28b27ce24231d3ea2531c2461114aba5de574491de36b8aec"],["0x000000000000000000000000000000000000000000000000000000000000000a","0x0000000000000000000000000000000000000000000000000000000000000064"]`

const decimalArgs = (text: string) => {
  const toDecimal = (value: unknown): unknown => Array.isArray(value) ? value.map(toDecimal) : BigInt(value as string).toString()
  return toDecimal(JSON.parse(`[${text}]`))
}

const encode = (p: Groth16Proof, signals: ReadonlyArray<string>) => {
  const result = groth16Calldata(p, signals)
  if (Either.isLeft(result)) throw new Error(result.left.message)
  return result.right
}

describe("groth16Calldata", () => {
  it("gives the arguments snarkjs's exportSolidityCallData gives, b's pairs swapped", () => {
    const call = encode(proof, publicSignals)
    expect(call.function).toBe("verifyProof(uint256[2],uint256[2][2],uint256[2],uint256[2])")
    expect(call.arguments).toEqual(decimalArgs(snarkjsCallData))
    expect(call.arguments[1][0]).toEqual([proof.pi_b[0]![1], proof.pi_b[0]![0]])
  })

  it("encodes the call as the selector then the 32-byte words of every argument in order", () => {
    const call = encode(proof, publicSignals)
    const words = [...snarkjsCallData.matchAll(/0x([0-9a-f]{64})/g)].map((m) => m[1])
    expect(words).toHaveLength(10)
    expect(call.calldata).toBe(`0x${functionSelector(call.function)}${words.join("")}`)
    expect(call.calldata).toMatch(/^0x[0-9a-f]{8}([0-9a-f]{64}){10}$/)
  })

  it("computes selectors with keccak-256", () => {
    expect(functionSelector("transfer(address,uint256)")).toBe("a9059cbb")
    expect(functionSelector("balanceOf(address)")).toBe("70a08231")
  })

  it("sizes the public signal array by the proof's signals", () => {
    expect(encode(proof, []).function).toBe("verifyProof(uint256[2],uint256[2][2],uint256[2],uint256[0])")
    const five = encode(proof, ["1", "2", "3", "4", "5"])
    expect(five.function).toMatch(/uint256\[5\]\)$/)
    expect(five.calldata.length).toBe(2 + 8 + 64 * (8 + 5))
  })

  it("refuses what is not a canonical bn128 Groth16 proof", () => {
    const q = "21888242871839275222246405745257275088696311157297823662689037894645226208583"
    const r = "21888242871839275222246405745257275088548364400416034343698204186575808495617"
    const refused = (p: Groth16Proof, signals: ReadonlyArray<string> = publicSignals) => {
      const result = groth16Calldata(p, signals)
      return Either.isLeft(result) ? result.left : null
    }
    expect(refused({ ...proof, curve: "bls12381" })?.message).toMatch(/bls12381/)
    expect(refused({ ...proof, protocol: "plonk" })?.message).toMatch(/plonk/)
    expect(refused({ ...proof, pi_a: [q, "1", "1"] })?.message).toMatch(/pi_a\[0\].*modulus/)
    expect(refused({ ...proof, pi_c: ["0x10", "1", "1"] })?.message).toMatch(/pi_c\[0\].*decimal/)
    expect(refused({ ...proof, pi_b: [proof.pi_b[0]!] })?.message).toMatch(/pi_b\[1\]/)
    expect(refused(proof, ["1", r])?.message).toMatch(/public_signals\[1\]/)
    expect(refused(proof, ["01"])?.message).toMatch(/public_signals\[0\].*decimal/)
    expect(refused(proof, ["-1"])?._tag).toBe("CalldataError")
  })
})
