import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { createEVM, type EVM } from "@ethereumjs/evm"
import { type Address, bytesToHex, hexToBytes } from "@ethereumjs/util"
import { UltraHonkBackend } from "@aztec/bb.js"
import { fork } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import solc from "solc"
import * as snarkjs from "snarkjs"
import {
  compileNoir,
  crsPoints,
  MAX_NOIR_ABI_DEPTH,
  MAX_NOIR_ABI_VALUES,
  type NoirAbi,
  NoirAbiError,
  noirCircuitInputs,
  type NoirCrs,
  type NoirProgram,
  noirPublicSignals,
  parseNoirProgram,
  proveUltraHonk,
  type UltraHonkProof,
  UltraHonkError,
  ultraHonkSolidityVerifier,
  ultraHonkVerificationKey,
  publicSignalsDecimal,
  readNoirAbi,
  ultraHonkKeyRecord,
  ultraHonkProofRecord,
  verifyUltraHonk,
  verifyUltraHonkRecord,
  writeCrsFromPtau,
  writeDevelopmentCrs
} from "../../src/noir/index.js"

// A Noir program through the engine the service calls: compiled by noir_wasm, proved by bb.js's
// UltraHonk against a CRS taken from a snarkjs powers of tau made here, checked by bb.js's own
// UltraHonkBackend (not this module's verifier) and by its Solidity verifier run in an in-process EVM.
const MANIFEST = `[package]
name = "pay"
type = "bin"
authors = [""]

[dependencies]
`
const MAIN = `fn main(amounts: [u64; 3], rate: Field, salt: Field, limit: pub Field) -> pub Field {
    let mut total: Field = 0;
    for i in 0..3 {
        total += amounts[i] as Field;
    }
    assert(total != limit);
    total * rate + salt
}
`
const INPUTS = { amounts: ["2", "3", "5"], rate: "7", salt: "11", limit: "100" }
const field = (n: bigint) => "0x" + n.toString(16).padStart(64, "0")

let work: string
let crs: NoirCrs
let program: NoirProgram
let proof: UltraHonkProof
let vk: Uint8Array

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "mzk-noir-test-"))
  let t = Date.now()
  // A power-12 ptau with one contribution (τ ≠ 1) holds 2^13 − 1 G1 points; this program needs
  // 2^12 + 1 (its dyadic size plus one).
  const curve = await (snarkjs as unknown as { curves: { getCurveFromName(n: string): Promise<unknown> } }).curves.getCurveFromName("bn128")
  const pot = snarkjs.powersOfTau as unknown as {
    newAccumulator(curve: unknown, power: number, file: string): Promise<unknown>
    contribute(from: string, to: string, name: string, entropy: string): Promise<unknown>
  }
  await pot.newAccumulator(curve, 12, join(work, "pot12_0.ptau"))
  await pot.contribute(join(work, "pot12_0.ptau"), join(work, "pot12.ptau"), "noir test", "entropy of the noir test")
  console.log(`power-12 ptau: ${Date.now() - t} ms`)
  t = Date.now()
  crs = await writeCrsFromPtau(join(work, "pot12.ptau"), join(work, "crs"))
  console.log(`CRS from the ptau, ${crsPoints(crs)} points: ${Date.now() - t} ms`)
  t = Date.now()
  const compiled = await compileNoir({ "Nargo.toml": MANIFEST, "src/main.nr": new TextEncoder().encode(MAIN) })
  if (!compiled.ok) throw new Error(compiled.message)
  program = compiled.program
  console.log(`compile: ${Date.now() - t} ms`)
  t = Date.now()
  proof = await proveUltraHonk(program, INPUTS, crs)
  console.log(`prove: ${Date.now() - t} ms, proof ${proof.proof.length} bytes`)
  vk = await ultraHonkVerificationKey(program, crs)
}, 300_000)

afterAll(async () => {
  await (globalThis as { curve_bn128?: { terminate(): Promise<void> } | null }).curve_bn128?.terminate()
  rmSync(work, { recursive: true, force: true })
})

/** bb.js's own verifier (UltraHonkBackend, keccak flavour), reading the CRS files itself. */
const bbVerifies = async (p: UltraHonkProof, with_: NoirCrs = crs) => {
  const backend = new UltraHonkBackend(program.bytecode, { threads: 1, crsPath: with_.path })
  try {
    return await backend.verifyProof({ proof: p.proof, publicInputs: [...p.publicInputs] }, { keccak: true })
  } finally {
    await backend.destroy()
  }
}

describe("compileNoir", () => {
  it("compiles Nargo.toml + src/main.nr into a program whose ABI names the inputs", () => {
    expect(program.noir_version).toMatch(/^1\.0\.0-beta\.3/)
    expect(typeof program.bytecode).toBe("string")
    expect(noirCircuitInputs(program.abi)).toEqual([
      { name: "amounts", visibility: "private", kind: "uint64", dimensions: [3] },
      { name: "rate", visibility: "private", kind: "field", dimensions: [] },
      { name: "salt", visibility: "private", kind: "field", dimensions: [] },
      { name: "limit", visibility: "public", kind: "field", dimensions: [] }
    ])
    expect(noirPublicSignals(program.abi)).toEqual(["limit", "return"])
  })

  it("reports a compile error with its file and line", async () => {
    const answer = await compileNoir({
      "Nargo.toml": MANIFEST,
      "src/main.nr": "mod util;\nfn main(x: Field) {\n    assert(util::double(x) == 4);\n}\n",
      "src/util.nr": "pub fn double(x: Field) -> Field {\n    let y: bool = x;\n    y * 2\n}\n"
    })
    expect(answer.ok).toBe(false)
    if (answer.ok) return
    expect(answer.code).toBe("compile_error")
    expect(answer.file).toBe("src/util.nr")
    expect(answer.line).toBe(2)
    // The server's temp directory never reaches the account.
    expect(answer.message).not.toContain(tmpdir())
  }, 60_000)

  it("refuses uploads it must not build: no manifest, other files, dependencies (a build never downloads)", async () => {
    const missing = await compileNoir({ "src/main.nr": MAIN })
    expect(missing).toMatchObject({ ok: false, code: "invalid_upload", file: "Nargo.toml" })
    const stray = await compileNoir({ "Nargo.toml": MANIFEST, "src/main.nr": MAIN, "../escape.nr": "" })
    expect(stray).toMatchObject({ ok: false, code: "invalid_upload", file: "../escape.nr" })
    const deps = await compileNoir({
      "Nargo.toml": MANIFEST + `ec = { tag = "v0.1.2", git = "https://example.invalid/noir-ec" }\n`,
      "src/main.nr": MAIN
    })
    expect(deps).toMatchObject({ ok: false, code: "invalid_upload", file: "Nargo.toml" })
    expect(await compileNoir({ "Nargo.toml": MANIFEST.replace("bin", "lib"), "src/main.nr": MAIN })).toMatchObject({ ok: false, code: "invalid_upload" })
  })

  it("takes a prebuilt program JSON and names what is wrong with a bad one", () => {
    const parsed = parseNoirProgram(JSON.stringify({ ...program, debug_symbols: "x", file_map: {} }))
    expect(parsed).toEqual({ ok: true, program })
    expect(parseNoirProgram("{")).toMatchObject({ ok: false, code: "invalid_upload" })
    expect(parseNoirProgram(JSON.stringify({ abi: program.abi }))).toMatchObject({ ok: false, message: expect.stringContaining("bytecode") })
    expect(parseNoirProgram(JSON.stringify({ bytecode: program.bytecode }))).toMatchObject({ ok: false, message: expect.stringContaining("abi") })
    expect(parseNoirProgram(JSON.stringify({ ...program, noir_version: "0.36.0+abc" }))).toMatchObject({ ok: false, message: expect.stringContaining("0.36.0") })
  })

  it("runs in the build child, answering over IPC", async () => {
    const job = fileURLToPath(new URL("../../src/build/noirJob.mjs", import.meta.url))
    const child = fork(job, [], { stdio: ["ignore", "ignore", "pipe", "ipc"], serialization: "advanced" })
    const answer = await new Promise<unknown>((resolve, reject) => {
      child.once("message", resolve)
      child.once("error", reject)
      child.send({ kind: "acir", bytes: new TextEncoder().encode(JSON.stringify(program)) })
    })
    // The program as JSON text: the parent reads it (an uploaded one may nest past what IPC copies).
    expect(answer).toEqual({ ok: true, program: expect.any(String) })
    expect(JSON.parse((answer as { program: string }).program)).toEqual(program)
  })
})

describe("the ABI as circuit inputs", () => {
  const abi = (type: unknown, visibility = "private"): NoirAbi =>
    ({ parameters: [{ name: "p", type, visibility }], return_type: null }) as unknown as NoirAbi

  it("readNoirAbi refuses what noirc does not write, ABIs that claim too many values and ones nested too deep, naming why", () => {
    const real = { parameters: [{ name: "p", type: { kind: "field" }, visibility: "public" }], return_type: null, error_types: {} }
    expect(readNoirAbi(real)).toBe(real)
    expect(() => readNoirAbi({ parameters: [null], return_type: null })).toThrow(NoirAbiError)
    expect(() => readNoirAbi({ parameters: "x", return_type: null })).toThrow(/not one noirc writes/)
    expect(() => readNoirAbi(abi({ kind: "array", length: 2 ** 31, type: { kind: "field" } }))).toThrow(`more than ${MAX_NOIR_ABI_VALUES} values`)
    expect(() => readNoirAbi(abi({ kind: "array", length: MAX_NOIR_ABI_VALUES, type: { kind: "field" } }))).not.toThrow()
    const deep = (levels: number): unknown => Array.from({ length: levels }).reduce<unknown>((inner) => ({ kind: "array", length: 1, type: inner }), { kind: "field" })
    // parameters, [0], type: the first array three levels down, each nested one a level deeper, the
    // innermost kind's text one more.
    expect(() => readNoirAbi(abi(deep(MAX_NOIR_ABI_DEPTH - 4)))).not.toThrow()
    expect(() => readNoirAbi(abi(deep(MAX_NOIR_ABI_DEPTH - 3)))).toThrow(`nests deeper than ${MAX_NOIR_ABI_DEPTH} levels`)
    // Deeper than any stack: refused without recursing.
    const deepest = JSON.parse(JSON.stringify(abi("T")).replace('"T"', `${'{"kind":"array","length":1,"type":'.repeat(100_000)}{"kind":"field"}${"}".repeat(100_000)}`))
    expect(() => readNoirAbi(deepest)).toThrow(/nests deeper/)
  })

  it("maps booleans to bits and nested arrays to dimensions", () => {
    expect(noirCircuitInputs(abi({ kind: "array", length: 2, type: { kind: "array", length: 3, type: { kind: "boolean" } } }, "public"))).toEqual([
      { name: "p", visibility: "public", kind: "bit", dimensions: [2, 3] }
    ])
    expect(noirPublicSignals(abi({ kind: "array", length: 2, type: { kind: "field" } }, "public"))).toEqual(["p[0]", "p[1]"])
  })

  it("names the parameter it cannot take", () => {
    expect(() => noirCircuitInputs(abi({ kind: "integer", sign: "signed", width: 8 }))).toThrow(NoirAbiError)
    expect(() => noirCircuitInputs(abi({ kind: "struct", path: "S", fields: [] }))).toThrow(/parameter p: struct/)
    expect(() => noirCircuitInputs(abi({ kind: "integer", sign: "unsigned", width: 128 }))).toThrow(/128-bit/)
  })
})

describe("UltraHonk", () => {
  it("proves: public inputs are the public parameter, then the return value", () => {
    // total 10, 10·7 + 11 = 81
    expect(proof.publicInputs).toEqual([field(100n), field(81n)])
  })

  it("is accepted by bb.js's own verifier and by verifyUltraHonk", async () => {
    expect(await bbVerifies(proof)).toBe(true)
    expect(await verifyUltraHonk(vk, proof, crs)).toBe(true)
  }, 60_000)

  it("is rejected with a tampered public input, by both", async () => {
    const tampered = { ...proof, publicInputs: [field(100n), field(82n)] }
    expect(await bbVerifies(tampered)).toBe(false)
    expect(await verifyUltraHonk(vk, tampered, crs)).toBe(false)
  }, 60_000)

  it("refuses inputs the program rejects, naming why", async () => {
    await expect(proveUltraHonk(program, { ...INPUTS, limit: "10" }, crs)).rejects.toThrow(UltraHonkError)
    await expect(proveUltraHonk(program, { ...INPUTS, amounts: ["1", "2"] }, crs)).rejects.toThrow(/amounts/)
  }, 60_000)

  it("refuses malformed proofs and public inputs before bb.js sees them", async () => {
    await expect(verifyUltraHonk(vk, { ...proof, proof: proof.proof.subarray(1) }, crs)).rejects.toThrow(/^proof:/)
    await expect(verifyUltraHonk(vk, { ...proof, publicInputs: ["0x12", field(81n)] }, crs)).rejects.toThrow(/public_inputs\[0\]/)
    const r = 21888242871839275222246405745257275088548364400416034343698204186575808495617n
    await expect(verifyUltraHonk(vk, { ...proof, publicInputs: [field(r), field(81n)] }, crs)).rejects.toThrow(/public_inputs\[0\]/)
    // A proof for another number of public inputs is simply not valid.
    expect(await verifyUltraHonk(vk, { ...proof, publicInputs: [field(100n)] }, crs)).toBe(false)
  }, 60_000)

  it("verifies as mzk's records hold key and proof (JSON, decimal signals), naming a malformed field", async () => {
    const key = ultraHonkKeyRecord(vk)
    const record = ultraHonkProofRecord(proof.proof)
    const signals = publicSignalsDecimal(proof.publicInputs)
    expect(signals).toEqual(["100", "81"])
    expect(await verifyUltraHonkRecord(key, record, signals, crs)).toBe(true)
    expect(await verifyUltraHonkRecord(key, record, ["100", "82"], crs)).toBe(false)
    await expect(verifyUltraHonkRecord({ protocol: "groth16" }, record, signals, crs)).rejects.toThrow(/^verification_key/)
    await expect(verifyUltraHonkRecord(key, { ...record, proof: "0x12" }, signals, crs)).rejects.toThrow(/^proof/)
    await expect(verifyUltraHonkRecord(key, { protocol: "plonk", curve: "bn128" }, signals, crs)).rejects.toThrow(/^proof/)
    await expect(verifyUltraHonkRecord(key, record, ["100", "-1"], crs)).rejects.toThrow(/^public_signals\[1\]/)
  }, 60_000)

  it("proves against a development CRS made from a fresh τ", async () => {
    const t = Date.now()
    const dev = await writeDevelopmentCrs(join(work, "dev-crs"), 2 ** 12 + 1)
    console.log(`development CRS, ${crsPoints(dev)} points: ${Date.now() - t} ms`)
    const p = await proveUltraHonk(program, INPUTS, dev)
    expect(await bbVerifies(p, dev)).toBe(true)
    // Another τ: the proof means nothing under the ptau's CRS.
    expect(await bbVerifies(p)).toBe(false)
  }, 120_000)

  it("a ptau too small for the points asked for is an error", async () => {
    await expect(writeCrsFromPtau(join(work, "pot12.ptau"), join(work, "big"), 2 ** 13)).rejects.toThrow(/has 8191 G1 points/)
  })

  it("never downloads: a CRS too small for the circuit is an error naming the shortfall", async () => {
    const small = await writeDevelopmentCrs(join(work, "small-crs"), 16)
    await expect(proveUltraHonk(program, INPUTS, small)).rejects.toThrow(/has 16 points; this circuit needs 4097/)
    await expect(proveUltraHonk(program, INPUTS, { path: join(work, "none") })).rejects.toThrow(/no UltraHonk CRS/)
  }, 60_000)
})

describe("the Solidity verifier from bb.js", () => {
  let evm: EVM
  let verifier: Address
  let selector: string

  beforeAll(async () => {
    const source = await ultraHonkSolidityVerifier(program, crs)
    const t = Date.now()
    const output = JSON.parse(solc.compile(JSON.stringify({
      language: "Solidity",
      sources: { "Verifier.sol": { content: source } },
      settings: {
        evmVersion: "cancun",
        optimizer: { enabled: true, runs: 1 },
        outputSelection: { "*": { "*": ["evm.bytecode.object", "evm.methodIdentifiers"] } }
      }
    }))) as {
      errors?: Array<{ severity: string; formattedMessage: string }>
      contracts: Record<string, Record<string, { evm: { bytecode: { object: string }; methodIdentifiers: Record<string, string> } }>>
    }
    expect((output.errors ?? []).filter((e) => e.severity === "error").map((e) => e.formattedMessage)).toEqual([])
    const contract = output.contracts["Verifier.sol"]!["HonkVerifier"]!
    console.log(`solc ${solc.version()}: ${Date.now() - t} ms, HonkVerifier ${contract.evm.bytecode.object.length / 2} bytes of init code`)
    selector = contract.evm.methodIdentifiers["verify(bytes,bytes32[])"]!
    // The verifier is over EIP-170's 24 KiB: a chain deploys it with its libraries linked apart.
    evm = await createEVM({ allowUnlimitedContractSize: true })
    const deployed = await evm.runCall({ data: hexToBytes(`0x${contract.evm.bytecode.object}`), gasLimit: 30_000_000n })
    expect(deployed.execResult.exceptionError).toBeUndefined()
    verifier = deployed.createdAddress!
  }, 300_000)

  // verify(bytes proof, bytes32[] publicInputs), ABI-encoded: two offsets, then each tail.
  const calldata = (p: UltraHonkProof) => {
    const word = (n: number) => n.toString(16).padStart(64, "0")
    const proofHex = Buffer.from(p.proof).toString("hex")
    const head = word(64) + word(64 + 32 + p.proof.length)
    const tail = word(p.proof.length) + proofHex + word(p.publicInputs.length) + p.publicInputs.map((x) => x.slice(2)).join("")
    return `0x${selector}${head}${tail}`
  }

  /** Whether the contract accepts: it reverts on most failures and returns false on the rest. */
  const verifyOnChain = async (p: UltraHonkProof) => {
    const result = await evm.runCall({ to: verifier, data: hexToBytes(calldata(p) as `0x${string}`), gasLimit: 30_000_000n })
    const out = bytesToHex(result.execResult.returnValue)
    return { valid: result.execResult.exceptionError === undefined && out === field(1n), gas: result.execResult.executionGasUsed }
  }

  it("accepts the proof mzk made", async () => {
    const { valid, gas } = await verifyOnChain(proof)
    expect(valid).toBe(true)
    console.log(`HonkVerifier.verify gas: ${gas}`)
  }, 60_000)

  it("rejects a tampered public input", async () => {
    expect((await verifyOnChain({ ...proof, publicInputs: [field(100n), field(82n)] })).valid).toBe(false)
    expect((await verifyOnChain({ ...proof, publicInputs: [field(101n), field(81n)] })).valid).toBe(false)
  }, 60_000)
})
