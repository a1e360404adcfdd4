import { Entropy } from "@mzk/core"
import { Effect, Layer, Random } from "effect"

/**
 * Deterministic `Entropy` from Effect's seeded generator: the same seed gives the same ids and
 * keys in the same order, so a failing test can be replayed exactly. Never use it in production.
 */
export const SeededEntropy = (seed: string | number = "mzk"): Layer.Layer<Entropy> =>
  Layer.sync(Entropy, () => {
    const random = Random.make(seed)
    return {
      bytes: (length) =>
        Effect.gen(function*() {
          const out = new Uint8Array(length)
          for (let i = 0; i < length; i++) out[i] = yield* random.nextIntBetween(0, 256)
          return out
        })
    }
  })
