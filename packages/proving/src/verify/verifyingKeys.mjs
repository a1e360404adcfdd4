// Prepared Groth16 verifying keys, for the threads that verify with the native addon (the prover
// pool's and the verification thread). Plain JS, for those threads.
import { createHash } from "node:crypto"

/**
 * The addon's prepared key for a snarkjs verification key, kept by content (the SHA-256 of the
 * key's JSON), so preparing (about 2 ms, plus 1 ms a public signal up to 32) is paid once while a
 * key keeps coming back; the least recently used is dropped past `capacity`. A key the addon
 * refuses (MZK_INVALID_INPUT: a point off its curve, at infinity, a bad shape) is kept as
 * undefined: the caller decides what that means.
 */
export const makeVerifyingKeys = (addon, capacity) => {
  const keys = new Map()
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
        if (error?.code !== "MZK_INVALID_INPUT") throw error
        key = undefined
      }
      if (keys.size >= capacity) keys.delete(keys.keys().next().value)
    }
    keys.set(id, key)
    return key
  }
}
