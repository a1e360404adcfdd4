import type { NoirCrs } from "../setup/crs.js"
import { verifyUltraHonkRecord } from "../noir/records.js"
import { BN128_Q, type JsonReader } from "./fields.js"
import { MAX_PUBLIC, type SystemModule } from "./system.js"

const HEX = /^0x([0-9a-fA-F]{2})*$/

/** The 0x-hex bytes at `object[field]`, or a problem naming it. */
const hexBytes = (reader: JsonReader, object: Record<string, unknown>, field: string, path: string): Uint8Array | undefined => {
  const value = object[field]
  if (typeof value !== "string" || !HEX.test(value) || value.length === 2) {
    return reader.problem(`${path}.${field}`, "must be 0x-prefixed hex bytes, as bb.js writes them")
  }
  return new Uint8Array(Buffer.from(value.slice(2), "hex"))
}

const PROTOCOL = (reader: JsonReader, object: Record<string, unknown>, path: string) => {
  if (object["protocol"] !== "ultra_honk") reader.problem(`${path}.protocol`, "must be \"ultra_honk\"")
}

const word = (bytes: Uint8Array, at: number) => BigInt("0x" + Buffer.from(bytes.subarray(at, at + 32)).toString("hex"))

/**
 * UltraHonk (keccak transcript) as mzk's records hold bb.js's bytes: a key
 * `{ protocol: "ultra_honk", vk: "0x…" }` (bb.js's `acirWriteVkUltraKeccakHonk`), a proof
 * `{ protocol: "ultra_honk", proof: "0x…" }` (bb.js's proof without its public inputs), public
 * signals as decimal strings. The key's header (circuit size, its log, the public inputs' count)
 * and every commitment (on BN254's G1: y² = x³ + 3, or the point at infinity) are checked before
 * bb.js reads it; bb.js verifies against the server's CRS.
 */
export const ultraHonkModule = (crs: NoirCrs): SystemModule => ({
  system: "ultra_honk",
  readKey: (reader, value) => {
    const key = reader.object(value, "verification_key")
    if (key === undefined) return undefined
    PROTOCOL(reader, key, "verification_key")
    const vk = hexBytes(reader, key, "vk", "verification_key")
    if (vk === undefined) return undefined
    // Four 8-byte header words, then G1 commitments of 64 bytes (x, y big-endian).
    if (vk.length < 32 || (vk.length - 32) % 64 !== 0) {
      return reader.problem("verification_key.vk", "is not an UltraHonk verification key: 32 header bytes, then 64-byte G1 points")
    }
    const header = new DataView(vk.buffer, vk.byteOffset, 32)
    const size = header.getBigUint64(0)
    const log = header.getBigUint64(8)
    const nPublic = header.getBigUint64(16)
    if (log < 1n || log > 28n || size !== 1n << log) {
      return reader.problem("verification_key.vk", "is not an UltraHonk verification key: its circuit size is not 2^log")
    }
    if (nPublic > BigInt(MAX_PUBLIC)) return reader.problem("verification_key.vk", `declares more than ${MAX_PUBLIC} public inputs`)
    for (let at = 32, i = 0; at < vk.length; at += 64, i++) {
      const x = word(vk, at)
      const y = word(vk, at + 32)
      const infinity = x === 0n && y === 0n
      if (!infinity && (x >= BN128_Q || y >= BN128_Q || (y * y - x * x * x - 3n) % BN128_Q !== 0n)) {
        reader.problem("verification_key.vk", `commitment ${i} is not a point of G1`)
      }
    }
    return Number(nPublic)
  },
  readProof: (reader, value) => {
    const proof = reader.object(value, "proof")
    if (proof === undefined) return
    PROTOCOL(reader, proof, "proof")
    const bytes = hexBytes(reader, proof, "proof", "proof")
    if (bytes !== undefined && bytes.length % 32 !== 0) reader.problem("proof.proof", "must be whole 32-byte field elements")
  },
  verify: (key, publicSignals, proof) =>
    verifyUltraHonkRecord(key, proof as Parameters<typeof verifyUltraHonkRecord>[1], publicSignals, crs)
})
