import { Entropy } from "@mzk/core"
import { Effect, Layer } from "effect"
import { randomFillSync } from "node:crypto"

/** How many random bytes one call into OpenSSL fetches ahead. */
const POOL_BYTES = 4096

/**
 * Production `Entropy`: the operating system's CSPRNG through node:crypto, fetched a page at a time.
 * One `randomBytes` call per id cost several microseconds (a native call and a Buffer each, twice
 * per created proof); handing out copies of a pooled page costs almost nothing. Every byte is
 * handed out once and then zeroed in the pool, as `crypto.randomUUID` keeps its own pool.
 */
export const NodeEntropy = Layer.sync(Entropy, () => {
  const pool = new Uint8Array(POOL_BYTES)
  let at = POOL_BYTES
  const take = (length: number): Uint8Array => {
    if (length > POOL_BYTES) return randomFillSync(new Uint8Array(length))
    if (at + length > POOL_BYTES) {
      randomFillSync(pool)
      at = 0
    }
    const out = pool.slice(at, at + length)
    pool.fill(0, at, at + length)
    at += length
    return out
  }
  return { bytes: (length) => Effect.sync(() => take(length)) }
})
