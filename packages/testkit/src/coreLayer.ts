import { CoreServices, SessionAuthenticator, type Storage } from "@mzk/core"
import { Layer } from "effect"
import { SeededEntropy } from "./entropy.js"
import { MemoryStore } from "./memoryStore.js"

/**
 * The core services over a store (the in-memory one unless given), seeded entropy and no session
 * authenticator: what a test of code built on mzk needs, with `TestClock` from the test runner.
 */
export const testCore = <E = never, R = never>(
  store: Layer.Layer<Storage, E, R> = MemoryStore as Layer.Layer<Storage, E, R>,
  options: { readonly seed?: string | number } = {}
) =>
  CoreServices.pipe(
    Layer.provideMerge(store),
    Layer.provideMerge(SeededEntropy(options.seed ?? "mzk")),
    Layer.provideMerge(SessionAuthenticator.none)
  )
