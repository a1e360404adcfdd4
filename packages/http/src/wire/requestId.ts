import { formatId, type RandomBits, randomBitsFrom } from "@mzk/core"
import type { Clock } from "effect"

const POOL_BYTES = 4096

/**
 * A maker of `req_…` ids, as every response carries in `Request-Id`: the time from `Clock`, 80
 * random bits from Web Crypto. Request ids need uniqueness only, not the `Entropy` port's
 * determinism nor ordering within a millisecond, so they skip both (made on every request, that
 * saves ~10 µs). Randomness is drawn a page at a time, held by this maker: one `getRandomValues`
 * call per request cost several microseconds, a slice of a pooled page almost none. Request ids are
 * not secrets, so pooling their randomness exposes nothing.
 */
export const makeRequestIds = () => {
  let pool = new Uint8Array(0)
  let poolAt = POOL_BYTES
  const randomBits80 = (): RandomBits => {
    if (poolAt + 10 > pool.length) {
      pool = globalThis.crypto.getRandomValues(new Uint8Array(POOL_BYTES))
      poolAt = 0
    }
    const bits = randomBitsFrom(pool, poolAt)
    poolAt += 10
    return bits
  }
  return (clock: Clock.Clock): string => formatId("request", clock.unsafeCurrentTimeMillis(), randomBits80())
}
