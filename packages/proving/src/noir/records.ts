// How UltraHonk keys and proofs sit in mzk's records, which hold JSON: a circuit's
// `verification_key` and a proof's `proof_blob` name their protocol as snarkjs's do, with bb.js's
// bytes as 0x-hex; public signals are decimal strings as for every system. The prover, the
// compiler's verifier contract and the calldata all read them through here.
import type { SnarkjsProof } from "@mzk/core"
import type { NoirCrs } from "../setup/crs.js"
import { type UltraHonkOptions, type UltraHonkProof, UltraHonkError, verifyUltraHonk } from "./ultraHonk.js"

/** A circuit's `verification_key` for UltraHonk: bb.js's key bytes (keccak flavour) as 0x-hex. */
export interface UltraHonkKeyRecord {
  readonly protocol: "ultra_honk"
  readonly curve: "bn128"
  readonly vk: string
}

const hex = (bytes: Uint8Array) => "0x" + Buffer.from(bytes).toString("hex")

const bytesOf = (value: unknown, what: string): Uint8Array => {
  if (typeof value !== "string" || !/^0x([0-9a-fA-F]{2})+$/.test(value)) throw new UltraHonkError(`${what}: must be 0x-prefixed hex bytes`)
  return new Uint8Array(Buffer.from(value.slice(2), "hex"))
}

export const ultraHonkKeyRecord = (vk: Uint8Array): UltraHonkKeyRecord => ({ protocol: "ultra_honk", curve: "bn128", vk: hex(vk) })

/** The key's bytes from a record; an UltraHonkError naming the field when it is not one. */
export const ultraHonkKeyBytes = (record: unknown): Uint8Array => {
  const fields = typeof record === "object" && record !== null ? (record as Record<string, unknown>) : {}
  if (fields["protocol"] !== "ultra_honk") throw new UltraHonkError("verification_key: not an ultra_honk key")
  return bytesOf(fields["vk"], "verification_key.vk")
}

/** A proof as mzk stores and returns it: the proof bytes (public inputs apart) as 0x-hex. */
export const ultraHonkProofRecord = (proof: Uint8Array): SnarkjsProof => ({ protocol: "ultra_honk", curve: "bn128", proof: hex(proof) })

const BN254_R = 21888242871839275222246405745257275088548364400416034343698204186575808495617n

/** Public signals (decimal, as mzk lists them) as bb.js's 32-byte hex fields. */
export const publicInputsHex = (signals: ReadonlyArray<string>): Array<string> =>
  signals.map((s, i) => {
    if (!/^(0|[1-9][0-9]*)$/.test(s) || BigInt(s) >= BN254_R) throw new UltraHonkError(`public_signals[${i}]: must be a decimal field element below r`)
    return "0x" + BigInt(s).toString(16).padStart(64, "0")
  })

/** bb.js's hex public inputs as mzk's decimal public signals. */
export const publicSignalsDecimal = (inputs: ReadonlyArray<string>): Array<string> => inputs.map((x) => BigInt(x).toString())

/** A stored proof and its public signals as bb.js verifies them. */
export const ultraHonkProofOf = (record: SnarkjsProof, signals: ReadonlyArray<string>): UltraHonkProof => {
  if (record.protocol !== "ultra_honk") throw new UltraHonkError(`proof: a ${record.protocol} proof, not ultra_honk`)
  return { proof: bytesOf(record["proof"], "proof.proof"), publicInputs: publicInputsHex(signals) }
}

/**
 * A proof checked against a key, both as mzk's records hold them (a circuit's `verification_key`,
 * a proof's blob and decimal public signals): true or false; an UltraHonkError naming the field
 * (`verification_key…`, `proof…`, `public_signals[i]`) when one is malformed. What the prover's
 * `verify` runs, and what a verification of a proof made elsewhere (bb.js's format in mzk's
 * JSON) would run.
 */
export const verifyUltraHonkRecord = async (
  key: unknown,
  proof: SnarkjsProof,
  signals: ReadonlyArray<string>,
  crs: NoirCrs,
  options: UltraHonkOptions = {}
): Promise<boolean> => {
  const vk = ultraHonkKeyBytes(key)
  return verifyUltraHonk(vk, ultraHonkProofOf(proof, signals), crs, options)
}
