import { Context, type Effect } from "effect"

/** Secure random bytes: node:crypto in production, a seeded generator in tests. */
export class Entropy extends Context.Tag("@mzk/core/Entropy")<Entropy, {
  readonly bytes: (length: number) => Effect.Effect<Uint8Array>
}>() {}
