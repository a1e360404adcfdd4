// UltraHonk proofs of Noir programs with @aztec/bb.js (Barretenberg in wasm). Every proof uses
// the keccak transcript ("UltraKeccakHonk"), the flavour bb.js's Solidity verifier checks, so the
// proof the API returns is the one a contract accepts; the poseidon flavour is not offered.
//
// bb.js is driven through its Barretenberg API rather than UltraHonkBackend so the CRS comes from
// readCrs (local files only; UltraHonkBackend would download missing points).
import { gunzipSync } from "node:zlib"
import { crsG2Words, type NoirCrs, readCrs } from "../setup/crs.js"
import { importOptional } from "../optionalPackages.mjs"

/** A compiled Noir program: the fields proving and verifying read (noirc's program artifact). */
export interface NoirProgram {
  readonly noir_version: string
  readonly hash?: number | string
  readonly abi: import("./abi.js").NoirAbi
  /** base64 of the gzipped ACIR. */
  readonly bytecode: string
}

/** A proof as bb.js splits it: the proof bytes and the public inputs, each a 0x-prefixed 32-byte hex field. */
export interface UltraHonkProof {
  readonly proof: Uint8Array
  readonly publicInputs: ReadonlyArray<string>
}

export interface UltraHonkOptions {
  /** Threads for bb.js's wasm workers (default 1: the proof pool runs one job per core). */
  readonly threads?: number
  /** The wasm memory ceiling, in 64 KiB pages. */
  readonly maxMemoryPages?: number
}

export class UltraHonkError extends Error {
  override readonly name = "UltraHonkError"
}

type BbModule = typeof import("@aztec/bb.js")
// Barretenberg's constructor is private: its instances come from `new()`.
type Api = Awaited<ReturnType<BbModule["Barretenberg"]["new"]>>

// A missing package stays a MissingOptionalPackage: the operator's to install, never the tenant's program's fault.
const loadBb = async (): Promise<BbModule> => await importOptional("@aztec/bb.js") as BbModule

const acir = (program: NoirProgram): Uint8Array => gunzipSync(Buffer.from(program.bytecode, "base64"))

/** Runs `f` with a fresh Barretenberg whose SRS holds `points` G1 points of the CRS, then frees it. */
const withApi = async <A>(
  crs: NoirCrs,
  options: UltraHonkOptions,
  points: (api: Api) => Promise<number>,
  f: (api: Api, bb: BbModule, g2: Uint8Array) => Promise<A>
): Promise<A> => {
  const bb = await loadBb()
  const api = await bb.Barretenberg.new({
    threads: options.threads ?? 1,
    ...(options.maxMemoryPages === undefined ? {} : { memory: { maximum: options.maxMemoryPages } })
  })
  try {
    const n = await points(api)
    const { g1, g2 } = readCrs(crs, n)
    await api.srsInitSrs(new bb.RawBuffer(g1), n, new bb.RawBuffer(g2))
    return await f(api, bb, g2)
  } finally {
    await api.destroy()
  }
}

// The prover commits to polynomials over the circuit's dyadic size; bb.js asks for one point more.
const circuitPoints = (bytecode: Uint8Array) => async (api: Api) => {
  const [, subgroup] = await api.acirGetCircuitSizes(bytecode, false, true)
  return subgroup + 1
}

/** Executes the program on `inputs` (named by its ABI) with noir_js; the gzipped witness. */
export const noirWitness = async (program: NoirProgram, inputs: Record<string, unknown>): Promise<Uint8Array> => {
  const noirJs = await importOptional("@noir-lang/noir_js") as typeof import("@noir-lang/noir_js")
  const noir = new noirJs.Noir(program as unknown as ConstructorParameters<typeof noirJs.Noir>[0])
  try {
    const { witness } = await noir.execute(inputs as Parameters<typeof noir.execute>[0])
    return witness
  } catch (e) {
    // noir_js names the parameter or the failed assertion; that is the client's error to read.
    throw new UltraHonkError(`the program rejected these inputs: ${e instanceof Error ? e.message : String(e)}`)
  }
}

/** Proves `program` on `inputs` with UltraHonk (keccak transcript): the proof and its public inputs. */
export const proveUltraHonk = async (
  program: NoirProgram,
  inputs: Record<string, unknown>,
  crs: NoirCrs,
  options: UltraHonkOptions = {}
): Promise<UltraHonkProof> => {
  const witness = await noirWitness(program, inputs)
  const bytecode = acir(program)
  return withApi(crs, options, circuitPoints(bytecode), async (api, bb) => {
    const withPublic = await api.acirProveUltraKeccakHonk(bytecode, false, gunzipSync(witness))
    const vk = await api.acirWriteVkUltraKeccakHonk(bytecode, false)
    // The verification key's field 1 is the number of public inputs.
    const nPublic = Number((await api.acirVkAsFieldsUltraHonk(new bb.RawBuffer(vk)))[1]!.toString())
    const { proof, publicInputs } = bb.splitHonkProof(withPublic, nPublic)
    return { proof, publicInputs: hexFields(publicInputs) }
  })
}

const hexFields = (bytes: Uint8Array): Array<string> =>
  Array.from({ length: bytes.length / 32 }, (_, i) => "0x" + Buffer.from(bytes.subarray(i * 32, i * 32 + 32)).toString("hex"))

/** The program's UltraHonk (keccak) verification key, as bb.js writes it. */
export const ultraHonkVerificationKey = (program: NoirProgram, crs: NoirCrs, options: UltraHonkOptions = {}): Promise<Uint8Array> => {
  const bytecode = acir(program)
  return withApi(crs, options, circuitPoints(bytecode), (api) => api.acirWriteVkUltraKeccakHonk(bytecode, false))
}

/**
 * What a build derives from a program: its UltraHonk (keccak) verification key and its gate count
 * (before padding to the dyadic size the CRS must cover), with one Barretenberg instance.
 */
export const ultraHonkSetup = (program: NoirProgram, crs: NoirCrs, options: UltraHonkOptions = {}): Promise<{ vk: Uint8Array; gates: number }> => {
  const bytecode = acir(program)
  return withApi(crs, options, circuitPoints(bytecode), async (api) => {
    const [total] = await api.acirGetCircuitSizes(bytecode, false, true)
    return { vk: await api.acirWriteVkUltraKeccakHonk(bytecode, false), gates: total }
  })
}

const BN254_R = 21888242871839275222246405745257275088548364400416034343698204186575808495617n
const FIELD_HEX = /^0x[0-9a-fA-F]{64}$/

/**
 * Checks a proof against a verification key: true or false. Malformed input (a proof that is not
 * whole 32-byte fields, a public input that is not a canonical field element) is an
 * UltraHonkError naming it; bb.js is only handed well-formed bytes.
 */
export const verifyUltraHonk = async (
  vk: Uint8Array,
  proof: UltraHonkProof,
  crs: NoirCrs,
  options: UltraHonkOptions = {}
): Promise<boolean> => {
  if (proof.proof.length === 0 || proof.proof.length % 32 !== 0) throw new UltraHonkError("proof: must be whole 32-byte field elements")
  proof.publicInputs.forEach((x, i) => {
    if (!FIELD_HEX.test(x) || BigInt(x) >= BN254_R) throw new UltraHonkError(`public_inputs[${i}]: must be a 0x-prefixed 32-byte field element below r`)
  })
  return withApi(crs, options, async () => 1, async (api, bb) => {
    const fields = await api.acirVkAsFieldsUltraHonk(new bb.RawBuffer(vk)).catch(() => {
      throw new UltraHonkError("verification_key: not an UltraHonk verification key")
    })
    if (Number(fields[1]!.toString()) !== proof.publicInputs.length) return false
    const publicBytes = new Uint8Array(proof.publicInputs.length * 32)
    proof.publicInputs.forEach((x, i) => publicBytes.set(Buffer.from(x.slice(2), "hex"), i * 32))
    return api.acirVerifyUltraKeccakHonk(bb.reconstructHonkProof(publicBytes, proof.proof), new bb.RawBuffer(vk))
  })
}

// bb.js's verifier contract hard-codes the ignition CRS's [τ]₂; a contract for another CRS (an
// operator's own, or a development one) gets that CRS's point instead.
const IGNITION_G2 = [
  "0x260e01b251f6f1c7e7ff4e580791dee8ea51d87a358e038b4efe30fac09383c1",
  "0x0118c4d5b837bcc2bc89b5b398b5974e9f5944073b32078b7e231fec938883b0",
  "0x04fc6369f7110fe3d25156c1bb9a72859cf2a04641f99ba4ee413c80da6a5fe4",
  "0x22febda3c0c0632a56475b4214e5615e11e6dd3f96e6cea2854a87d4dacc5e55"
]

/**
 * The Solidity verifier (contract HonkVerifier, `verify(bytes proof, bytes32[] publicInputs)`) for
 * `program` under `crs`, with that CRS's [τ]₂ in its pairing check.
 */
export const ultraHonkSolidityVerifier = (program: NoirProgram, crs: NoirCrs, options: UltraHonkOptions = {}): Promise<string> => {
  const bytecode = acir(program)
  return withApi(crs, options, circuitPoints(bytecode), async (api, bb, g2) => {
    const vk = await api.acirWriteVkUltraKeccakHonk(bytecode, false)
    return solidityOf(api, bb, vk, g2)
  })
}

/**
 * The same contract from the verification key alone (what a circuit record keeps): bb.js 0.82.2
 * renders it from the key, reading nothing of the program it is also handed, so an empty one is.
 */
export const ultraHonkSolidityVerifierForKey = (vk: Uint8Array, crs: NoirCrs, options: UltraHonkOptions = {}): Promise<string> =>
  withApi(crs, options, async () => 1, async (api, bb, g2) => {
    await api.acirVkAsFieldsUltraHonk(new bb.RawBuffer(vk)).catch(() => {
      throw new UltraHonkError("verification_key: not an UltraHonk verification key")
    })
    return solidityOf(api, bb, vk, g2)
  })

const solidityOf = async (api: Api, bb: BbModule, vk: Uint8Array, g2: Uint8Array): Promise<string> => {
  // Typed as a string, but bb.js 0.82.2 hands back the source's bytes.
  const raw: unknown = await api.acirHonkSolidityVerifier(new Uint8Array(0), new bb.RawBuffer(vk))
  const ours = crsG2Words(g2)
  let out = typeof raw === "string" ? raw : new TextDecoder().decode(raw as Uint8Array)
  IGNITION_G2.forEach((word, i) => {
    if (!out.includes(word)) throw new UltraHonkError("bb.js's verifier no longer carries the ignition [τ]₂ this code replaces")
    out = out.replace(word, ours[i]!)
  })
  return out
}
