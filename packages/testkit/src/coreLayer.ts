import { CoreServices, type Prover, SessionAuthenticator, type Storage } from "@mzk/core"
import { Layer } from "effect"
import { SeededEntropy } from "./entropy.js"
import { FakeCircuitCatalog } from "./fakeCatalog.js"
import { FakeProver } from "./fakeProver.js"
import { MemoryStore } from "./memoryStore.js"

/**
 * The core services over a store (the in-memory one unless given), seeded entropy, no session
 * authenticator, the fake prover and catalog: what a test of code built on mzk needs, with
 * `TestClock` from the test runner.
 */
export const testCore = <E = never, R = never>(
  store: Layer.Layer<Storage, E, R> = MemoryStore as Layer.Layer<Storage, E, R>,
  options: { readonly seed?: string | number; readonly prover?: Layer.Layer<Prover> } = {}
) =>
  CoreServices.pipe(
    Layer.provideMerge(store),
    // The fake prover and the real catalog's shapes unless a prover is given.
    Layer.provideMerge(options.prover ?? FakeProver()),
    Layer.provideMerge(FakeCircuitCatalog),
    Layer.provideMerge(SeededEntropy(options.seed ?? "mzk")),
    Layer.provideMerge(SessionAuthenticator.none)
  )
