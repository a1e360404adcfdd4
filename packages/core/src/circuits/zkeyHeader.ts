import type { SetupSystem } from "./compiler.js"

/** snarkjs's protocol ids in a zkey's header section (`zkey_constants.js`). */
const PROTOCOLS: ReadonlyMap<number, SetupSystem> = new Map([[1, "groth16"], [2, "plonk"], [10, "fflonk"]])

/**
 * The proof system a snarkjs zkey was set up for, from its first bytes: the iden3 binary file
 * (`zkey`, version, section count), then sections of (type u32, size u64) little-endian; snarkjs
 * writes the header section (type 1) first, and its first word is the protocol id. `unknown` when
 * the bytes are not a zkey that starts so or the id is not one mzk proves; `short` when too few
 * bytes were given to tell. The build reads the whole file again; this is for refusing an upload
 * that names another system before anything is stored.
 */
export const zkeyProofSystem = (head: Uint8Array): SetupSystem | "unknown" | "short" => {
  if (head.length < 28) return "short"
  const view = new DataView(head.buffer, head.byteOffset, head.byteLength)
  const magic = String.fromCharCode(head[0]!, head[1]!, head[2]!, head[3]!)
  if (magic !== "zkey") return "unknown"
  if (view.getUint32(12, true) !== 1) return "unknown"
  return PROTOCOLS.get(view.getUint32(24, true)) ?? "unknown"
}
