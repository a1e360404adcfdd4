import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { type BuildOutput, proofCalldata, type SetupSystem, type SnarkjsProof } from "@mzk/core"
import { createEVM, type EVM } from "@ethereumjs/evm"
import { type Address, bytesToHex, hexToBytes } from "@ethereumjs/util"
import { Effect, Either, Exit } from "effect"
import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import solc from "solc"
import * as snarkjs from "snarkjs"
import { makeCircuitCompiler } from "../../src/build/compiler.js"
import { MUL_SOURCE, SUM_TIMES_SOURCE } from "../fixtures/mulSource.js"

// PLONK and FFLONK circuits end to end below the HTTP API: set up by the CircuitCompiler from a
// development ptau alone, proved with snarkjs, checked by the snarkjs command line (another
// process), and on chain: the verifier solidityVerifier renders, compiled by solc, run in an
// in-process EVM with the calldata the core computes.
const SOURCE = MUL_SOURCE
const SNARKJS_CLI = fileURLToPath(new URL("../../node_modules/.bin/snarkjs", import.meta.url))
type FullProver = { fullProve(inputs: unknown, wasm: Uint8Array, zkey: Uint8Array): Promise<{ proof: SnarkjsProof; publicSignals: Array<string> }> }

let work: string
const compiler = () =>
  makeCircuitCompiler({ developmentPtau: { power: 8, dir: join(work, "ptau") }, timeoutMs: 120_000, memoryBytes: 2 ** 31 })

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), "mzk-systems-test-"))
})

afterAll(async () => {
  await (globalThis as { curve_bn128?: { terminate(): Promise<void> } | null }).curve_bn128?.terminate()
  rmSync(work, { recursive: true, force: true })
})

const deploy = async (source: string) => {
  const output = JSON.parse(solc.compile(JSON.stringify({
    language: "Solidity",
    sources: { "Verifier.sol": { content: source } },
    settings: { evmVersion: "cancun", optimizer: { enabled: true, runs: 200 }, outputSelection: { "*": { "*": ["evm.bytecode.object"] } } }
  }))) as { errors?: Array<{ severity: string; formattedMessage: string }>; contracts: Record<string, Record<string, { evm: { bytecode: { object: string } } }>> }
  expect((output.errors ?? []).filter((e) => e.severity === "error").map((e) => e.formattedMessage)).toEqual([])
  const [contract] = Object.values(output.contracts["Verifier.sol"]!)
  const evm = await createEVM()
  const deployed = await evm.runCall({ data: hexToBytes(`0x${contract!.evm.bytecode.object}`), gasLimit: 30_000_000n })
  expect(deployed.execResult.exceptionError).toBeUndefined()
  return { evm, verifier: deployed.createdAddress! }
}

const callVerifier = async (evm: EVM, verifier: Address, proof: SnarkjsProof, signals: ReadonlyArray<string>) => {
  const call = proofCalldata(proof, signals)
  if (Either.isLeft(call)) throw new Error(call.left.message)
  const result = await evm.runCall({ to: verifier, data: hexToBytes(call.right.calldata as `0x${string}`), gasLimit: 5_000_000n })
  expect(result.execResult.exceptionError).toBeUndefined()
  const out = bytesToHex(result.execResult.returnValue)
  return { valid: /^0x0*1$/.test(out), gas: result.execResult.executionGasUsed, function: call.right.function }
}

describe.each<SetupSystem>(["plonk", "fflonk"])("%s", (system) => {
  let built: BuildOutput
  let proof: SnarkjsProof
  let signals: Array<string>

  beforeAll(async () => {
    const t = Date.now()
    built = await Effect.runPromise(compiler().build({
      kind: "circom",
      main: "mul.circom",
      files: { "mul.circom": new TextEncoder().encode(SOURCE) },
      proving_system: system
    }))
    console.log(`${system} build (universal setup, development ptau 2^8): ${Date.now() - t} ms, zkey ${(built.zkey as Uint8Array).length} bytes`)
    ;({ proof, publicSignals: signals } = await (snarkjs as unknown as Record<string, FullProver>)[system]!.fullProve(
      { a: "3", b: "11" },
      built.wasm as Uint8Array,
      built.zkey as Uint8Array
    ))
  }, 180_000)

  it("is set up for the system asked, with its verification key", () => {
    expect(built.proving_system).toBe(system)
    expect((built.verification_key as { protocol: string }).protocol).toBe(system)
    expect(built.public_signals).toEqual(["c"])
    expect(signals).toEqual(["33"])
  })

  it("makes proofs the snarkjs command line verifies, and refuses a tampered signal", () => {
    const dir = mkdtempSync(join(work, `${system}-cli-`))
    writeFileSync(join(dir, "vk.json"), JSON.stringify(built.verification_key))
    writeFileSync(join(dir, "proof.json"), JSON.stringify(proof))
    writeFileSync(join(dir, "public.json"), JSON.stringify(signals))
    writeFileSync(join(dir, "tampered.json"), JSON.stringify(["34"]))
    const verify = (pub: string) => {
      try {
        return execFileSync(SNARKJS_CLI, [system, "verify", "vk.json", pub, "proof.json"], { cwd: dir, encoding: "utf8", stdio: "pipe" })
      } catch (e) {
        return String((e as { stdout?: string }).stdout ?? e)
      }
    }
    expect(verify("public.json")).toMatch(/OK!|PROOF VERIFIED SUCCESSFULLY/)
    expect(verify("tampered.json")).not.toMatch(/OK!|PROOF VERIFIED SUCCESSFULLY/)
  }, 60_000)

  it("has a Solidity verifier that accepts the calldata and rejects a tampered public signal", async () => {
    const source = await Effect.runPromise(compiler().solidityVerifier(built.verification_key))
    const { evm, verifier } = await deploy(source)
    const good = await callVerifier(evm, verifier, proof, signals)
    expect(good.valid).toBe(true)
    console.log(`${system} verifyProof gas: ${good.gas} (${good.function})`)
    expect((await callVerifier(evm, verifier, proof, ["34"])).valid).toBe(false)
  }, 120_000)

  it("is recognised from its zkey as a prebuilt upload; named as another system it is refused", async () => {
    const prebuilt = (proving_system?: SetupSystem) =>
      compiler().build({
        kind: "artifacts",
        wasm: built.wasm,
        zkey: built.zkey,
        sym: built.sym!,
        r1cs: null,
        sample_inputs: new TextEncoder().encode(JSON.stringify({ a: 2, b: 5 })),
        ...(proving_system === undefined ? {} : { proving_system })
      })
    const recognised = await Effect.runPromise(prebuilt())
    expect(recognised.proving_system).toBe(system)
    expect((recognised.verification_key as { protocol: string }).protocol).toBe(system)
    const exit = await Effect.runPromiseExit(prebuilt("groth16"))
    expect(Exit.isFailure(exit)).toBe(true)
    if (Exit.isFailure(exit)) expect(JSON.stringify(exit.cause)).toMatch(new RegExp(`set up for ${system}, not groth16`))
  }, 120_000)
})

// A gate whose inputs are sums: snarkjs's setups count a wire per sum that the witness does not have.
describe.each<SetupSystem>(["plonk", "fflonk"])("%s, a circuit whose gates take sums (wires the setup adds)", (system) => {
  it("its zkey, wasm and sym uploaded prebuilt, with and without the r1cs, are recognised and prove", async () => {
    const built = await Effect.runPromise(compiler().build({
      kind: "circom",
      main: "sum.circom",
      files: { "sum.circom": new TextEncoder().encode(SUM_TIMES_SOURCE) },
      proving_system: system
    }))
    for (const r1cs of [null, built.r1cs]) {
      const prebuilt = await Effect.runPromise(compiler().build({
        kind: "artifacts",
        wasm: built.wasm,
        zkey: built.zkey,
        sym: built.sym!,
        r1cs,
        sample_inputs: new TextEncoder().encode(JSON.stringify({ a: 2, b: 5, d: 3 }))
      }))
      expect(prebuilt).toMatchObject({ proving_system: system, public_signals: ["c"], verification_key: built.verification_key })
    }
  }, 120_000)
})

describe("a ptau too small for the system", () => {
  it("fails the build with circuit_too_large, naming the system", async () => {
    const small = makeCircuitCompiler({ developmentPtau: { power: 3, dir: join(work, "ptau3") }, timeoutMs: 120_000, memoryBytes: 2 ** 31 })
    const exit = await Effect.runPromiseExit(small.build({
      kind: "circom",
      main: "mul.circom",
      files: { "mul.circom": new TextEncoder().encode(SOURCE) },
      proving_system: "fflonk"
    }))
    expect(Exit.isFailure(exit)).toBe(true)
    if (Exit.isFailure(exit)) {
      expect(JSON.stringify(exit.cause)).toMatch(/circuit_too_large/)
      expect(JSON.stringify(exit.cause)).toMatch(/fflonk/)
    }
  }, 120_000)
})

