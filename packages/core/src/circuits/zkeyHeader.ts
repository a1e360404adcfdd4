import type { SetupSystem } from "./compiler.js"

/** snarkjs's protocol ids in a zkey's header section (`zkey_constants.js`). */
const PROTOCOLS: ReadonlyMap<number, SetupSystem> = new Map([[1, "groth16"], [2, "plonk"], [10, "fflonk"]])

/**
 * What a zkey's bytes say of its proof system: the system; `unknown` when they are not a zkey, name
 * a protocol mzk does not prove, or hold no header section; `short` when they end before it.
 */
export type ZkeySystem = SetupSystem | "unknown" | "short"

/** A scan of a zkey's bytes as they pass, in chunks of any size, once. */
export interface ZkeySystemScan {
  readonly push: (chunk: Uint8Array) => void
  /** What the bytes pushed so far say. */
  readonly result: () => ZkeySystem
}

/**
 * The proof system of a snarkjs zkey, found where snarkjs puts it, by walking the section table as
 * the bytes stream past: the iden3 binary file (`zkey`, version, section count), then sections of
 * (type u32, size u64, data) little-endian; the header section (type 1) holds the protocol id.
 * Groth16 keys write it first; PLONK and FFLONK keys write it last, after every other section. It
 * reads 12 bytes per section header and 4 of the header section, and passes over everything else
 * without looking at it or keeping it: an upload learns its zkey's system as it is staged, however
 * large the zkey, for the cost of counting its bytes.
 */
export const scanZkeySystem = (): ZkeySystemScan => {
  let answer: ZkeySystem = "short"
  let done = false
  // The field being read (file header, section header, protocol id), then bytes to pass over.
  const field = new Uint8Array(12)
  const view = new DataView(field.buffer)
  let step: "file" | "section" | "protocol" = "file"
  let need = 12
  let filled = 0
  let skip = 0
  let sectionsLeft = 0

  const finish = (system: ZkeySystem) => {
    answer = system
    done = true
  }
  const nextSection = () => {
    if (sectionsLeft === 0) return finish("unknown")
    sectionsLeft--
    step = "section"
    need = 12
  }
  const read = () => {
    if (step === "file") {
      if (String.fromCharCode(field[0]!, field[1]!, field[2]!, field[3]!) !== "zkey") return finish("unknown")
      sectionsLeft = view.getUint32(8, true)
      return nextSection()
    }
    if (step === "section") {
      if (view.getUint32(0, true) === 1) {
        step = "protocol"
        need = 4
        return
      }
      skip = Number(view.getBigUint64(4, true))
      return nextSection()
    }
    finish(PROTOCOLS.get(view.getUint32(0, true)) ?? "unknown")
  }

  return {
    push: (chunk) => {
      let at = 0
      while (!done && at < chunk.length) {
        if (skip > 0) {
          const n = Math.min(skip, chunk.length - at)
          skip -= n
          at += n
          continue
        }
        const n = Math.min(need - filled, chunk.length - at)
        field.set(chunk.subarray(at, at + n), filled)
        filled += n
        at += n
        if (filled === need) {
          filled = 0
          read()
        }
      }
    },
    result: () => answer
  }
}

/** `scanZkeySystem` over bytes held whole. */
export const zkeyProofSystem = (bytes: Uint8Array): ZkeySystem => {
  const scan = scanZkeySystem()
  scan.push(bytes)
  return scan.result()
}
