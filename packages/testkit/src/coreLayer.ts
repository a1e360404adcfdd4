import { type BuiltinCircuits, type CircuitCompiler, CoreServices, type Prover, SessionAuthenticator, type Storage, type Verifier } from "@mzk/core"
import { Layer } from "effect"
import { SeededEntropy } from "./entropy.js"
import { FakeBuiltinCircuits } from "./fakeCatalog.js"
import { FakeCompiler } from "./fakeCompiler.js"
import { FakeProver } from "./fakeProver.js"
import { FakeVerifier } from "./fakeVerifier.js"
import { SqliteMemoryStore } from "./sqliteMemoryStore.js"

/**
 * The core services over a store (SQLite in memory, `SqliteMemoryStore`, unless given), seeded entropy, no session
 * authenticator, the fake prover, compiler and built-in circuits: what a test of code built on mzk
 * needs, with `TestClock` from the test runner. The background loops (`ProofLoops`,
 * `CircuitBuilds.layer`, the delivery engine) are the test's to build over it.
 */
export const testCore = <E = never, R = never>(
  store: Layer.Layer<Storage, E, R> = SqliteMemoryStore as Layer.Layer<Storage, E, R>,
  options: {
    readonly seed?: string | number
    readonly prover?: Layer.Layer<Prover>
    /** `FakeVerifier` unless given (the real one is `@mzk/proving`'s `VerifierLive`). */
    readonly verifier?: Layer.Layer<Verifier>
    readonly compiler?: Layer.Layer<CircuitCompiler>
    /** The real built-in circuits, where a test proves with the real prover. */
    readonly builtins?: Layer.Layer<BuiltinCircuits>
  } = {}
) =>
  CoreServices.pipe(
    Layer.provideMerge(store),
    // The fakes, with the real built-in circuits' shapes, unless a prover or compiler is given.
    Layer.provideMerge(options.prover ?? FakeProver()),
    Layer.provideMerge(options.verifier ?? FakeVerifier),
    Layer.provideMerge(options.compiler ?? FakeCompiler()),
    Layer.provideMerge(options.builtins ?? FakeBuiltinCircuits),
    Layer.provideMerge(SeededEntropy(options.seed ?? "mzk")),
    Layer.provideMerge(SessionAuthenticator.none)
  )
