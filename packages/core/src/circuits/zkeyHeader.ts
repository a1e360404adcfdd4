import type { SetupSystem } from "./compiler.js"

/** snarkjs's protocol ids in a zkey's header section (`zkey_constants.js`). */
const PROTOCOLS: ReadonlyMap<number, SetupSystem> = new Map([[1, "groth16"], [2, "plonk"], [10, "fflonk"]])

/**
 * The proof system a snarkjs zkey was set up for, from its first bytes: the iden3 binary file
 * (`zkey`, version, section count), then sections of (type u32, size u64, data) little-endian; the
 * header section (type 1) holds the protocol id. Groth16 keys write it first; PLONK and FFLONK keys
 * write their additions section first, so it is found within the head only when that section is
 * small. `unknown` when the bytes are not a zkey or the id is not one mzk proves; `short` when the
 * header section is not within the bytes given. The build reads the whole file again (and fails a
 * key of another system than the upload named); this refuses such an upload before anything is
 * stored wherever the head tells.
 */
export const zkeyProofSystem = (head: Uint8Array): SetupSystem | "unknown" | "short" => {
  if (head.length < 12) return "short"
  const view = new DataView(head.buffer, head.byteOffset, head.byteLength)
  const magic = String.fromCharCode(head[0]!, head[1]!, head[2]!, head[3]!)
  if (magic !== "zkey") return "unknown"
  const sections = view.getUint32(8, true)
  let offset = 12
  for (let i = 0; i < sections; i++) {
    if (offset + 12 > head.length) return "short"
    const type = view.getUint32(offset, true)
    const size = Number(view.getBigUint64(offset + 4, true))
    offset += 12
    if (type === 1) {
      if (offset + 4 > head.length) return "short"
      return PROTOCOLS.get(view.getUint32(offset, true)) ?? "unknown"
    }
    offset += size
  }
  return "short"
}
