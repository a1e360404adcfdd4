import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { type BuildOutput, type Groth16Proof, groth16Calldata, type SolidityCalldata } from "@mzk/core"
import { Effect, Either } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as snarkjs from "snarkjs"
import { makeCircuitCompiler } from "../../src/build/compiler.js"
import { callContract, compileContract, type Deployed, deployContract } from "../fixtures/evm.js"

// An uploaded circuit's whole on-chain path: built by the CircuitCompiler against a development
// ptau, proved with snarkjs, its verifier rendered by solidityVerifier, compiled by solc and run in
// an in-process EVM, called with the calldata the core computes.
const SOURCE = `pragma circom 2.1.0;
template Pay(n) {
  signal input amounts[n];
  signal input rate;
  signal input salt;
  signal output total;
  signal output tagged;
  var sum = 0;
  for (var i = 0; i < n; i++) sum += amounts[i];
  total <== sum * rate;
  tagged <== total * salt;
}
component main {public [amounts]} = Pay(3);
`
const exportSolidityCallData = (snarkjs.groth16 as unknown as {
  exportSolidityCallData(proof: unknown, signals: ReadonlyArray<string>): Promise<string>
}).exportSolidityCallData

let work: string
let built: BuildOutput
let verifier: Deployed
let proof: Groth16Proof
let signals: Array<string>
let otherProof: Groth16Proof

const calldataOf = (p: Groth16Proof, s: ReadonlyArray<string>): SolidityCalldata => {
  const result = groth16Calldata(p, s)
  if (Either.isLeft(result)) throw new Error(result.left.message)
  return result.right
}

/** What `verifyProof` returns for this calldata (it returns false rather than reverting on a bad proof). */
const verifyOnChain = async (data: string) => {
  const { returned, gas, exceptionError } = await callContract(verifier, data)
  expect(exceptionError).toBeUndefined()
  expect(returned).toMatch(/^0x0{63}[01]$/)
  return { valid: returned.endsWith("1"), gas }
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "mzk-solidity-test-"))
  const compiler = makeCircuitCompiler({
    developmentPtau: { power: 5, dir: join(work, "ptau") },
    timeoutMs: 120_000,
    memoryBytes: 2 ** 31
  })
  const t = Date.now()
  built = await Effect.runPromise(compiler.build({ kind: "circom", main: "pay.circom", files: { "pay.circom": new TextEncoder().encode(SOURCE) } }))
  console.log(`build with a fresh power-5 development ptau: ${Date.now() - t} ms`)
  const inputs = { amounts: ["2", "3", "5"], rate: "7", salt: "11" }
  // A circom build gives its artifacts as bytes.
  const wasm = built.wasm as Uint8Array
  const zkey = built.zkey as Uint8Array
  ;({ proof, publicSignals: signals } = await snarkjs.groth16.fullProve(inputs, wasm, zkey))
  ;({ proof: otherProof } = await snarkjs.groth16.fullProve({ ...inputs, salt: "13" }, wasm, zkey))

  const source = await Effect.runPromise(compiler.solidityVerifier(built.verification_key))
  const t2 = Date.now()
  const { bytecode, solcVersion } = compileContract(source, "Groth16Verifier")
  console.log(`solc ${solcVersion}: ${Date.now() - t2} ms`)
  verifier = await deployContract(bytecode)
}, 120_000)

afterAll(async () => {
  await (globalThis as { curve_bn128?: { terminate(): Promise<void> } | null }).curve_bn128?.terminate()
  rmSync(work, { recursive: true, force: true })
})

describe("the exported Solidity verifier", () => {
  it("is built for the circuit's public signals", () => {
    expect(built.public_signals).toEqual(["total", "tagged", "amounts[0]", "amounts[1]", "amounts[2]"])
    expect(signals).toEqual(["70", "770", "2", "3", "5"])
  })

  it("gets from the core's calldata the arguments snarkjs's exportSolidityCallData gives", async () => {
    const fromSnarkjs = JSON.parse(`[${await exportSolidityCallData(proof, signals)}]`) as unknown
    const toDecimal = (v: unknown): unknown => Array.isArray(v) ? v.map(toDecimal) : BigInt(v as string).toString()
    const call = calldataOf(proof, signals)
    expect(call.arguments).toEqual(toDecimal(fromSnarkjs))
    expect(call.function).toBe("verifyProof(uint256[2],uint256[2][2],uint256[2],uint256[5])")
  })

  it("accepts the calldata of a real proof", async () => {
    const { valid, gas } = await verifyOnChain(calldataOf(proof, signals).calldata)
    expect(valid).toBe(true)
    console.log(`verifyProof gas: ${gas}`)
    expect((await verifyOnChain(calldataOf(otherProof, [signals[0]!, "910", ...signals.slice(2)]).calldata)).valid).toBe(true)
  })

  it("rejects a tampered proof", async () => {
    // Valid points from another proof of the same circuit: only the pairing check can catch it.
    const mixed = { ...proof, pi_a: otherProof.pi_a }
    expect((await verifyOnChain(calldataOf(mixed, signals).calldata)).valid).toBe(false)
    const c = { ...proof, pi_c: otherProof.pi_c }
    expect((await verifyOnChain(calldataOf(c, signals).calldata)).valid).toBe(false)
    // b with its pairs left in snarkjs's order, as a client that forgot the swap would send it
    const good = calldataOf(proof, signals)
    const unswapped = good.calldata.slice(0, 10 + 64 * 2) +
      [proof.pi_b[0]![0]!, proof.pi_b[0]![1]!, proof.pi_b[1]![0]!, proof.pi_b[1]![1]!]
        .map((x) => BigInt(x).toString(16).padStart(64, "0")).join("") +
      good.calldata.slice(10 + 64 * 6)
    expect(unswapped.length).toBe(good.calldata.length)
    expect((await verifyOnChain(unswapped)).valid).toBe(false)
  })

  it("rejects a tampered public signal", async () => {
    expect((await verifyOnChain(calldataOf(proof, ["71", ...signals.slice(1)]).calldata)).valid).toBe(false)
    expect((await verifyOnChain(calldataOf(proof, [...signals.slice(0, 4), "6"]).calldata)).valid).toBe(false)
  })
})
