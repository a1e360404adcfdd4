// Prepared Groth16 verifying keys, for the threads that verify with the native addon (the prover
// pool's and the verification thread). Plain JS, for those threads.
// @ts-check
import { createHash } from "node:crypto"

/**
 * The addon's prepared key for a snarkjs verification key, kept by content (the SHA-256 of the
 * key's JSON), so preparing (about 2 ms, plus 1 ms a public signal up to 32) is paid once while a
 * key keeps coming back; the least recently used is dropped past `capacity`. A key the addon
 * refuses (MZK_INVALID_INPUT: a point off its curve, at infinity, a bad shape) is kept as
 * undefined: the caller decides what that means.
 * @param {Pick<import("@mzk/prover-native").NativeProverAddon, "prepareVerifyingKey">} addon
 * @param {number} capacity
 */
export const makeVerifyingKeys = (addon, capacity) => {
  /** @type {Map<string, import("@mzk/prover-native").VerifyingKeyHandle | undefined>} */
  const keys = new Map()
  /** @param {import("@mzk/prover-native").Groth16VerificationKey} vkey */
  return (vkey) => {
    const id = createHash("sha256").update(JSON.stringify(vkey) ?? "").digest("hex")
    let key
    if (keys.has(id)) {
      key = keys.get(id)
      keys.delete(id)
    } else {
      try {
        key = addon.prepareVerifyingKey(vkey)
      } catch (error) {
        if (!(error instanceof Error && "code" in error && error.code === "MZK_INVALID_INPUT")) throw error
        key = undefined
      }
      const oldest = keys.keys().next()
      if (keys.size >= capacity && !oldest.done) keys.delete(oldest.value)
    }
    keys.set(id, key)
    return key
  }
}
