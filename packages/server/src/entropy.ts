import { Entropy } from "@mzk/core"
import { Effect, Layer } from "effect"
import { randomBytes } from "node:crypto"

/** Production `Entropy`: the operating system's CSPRNG through node:crypto. */
export const NodeEntropy = Layer.succeed(Entropy, {
  bytes: (length) => Effect.sync(() => new Uint8Array(randomBytes(length)))
})
