// A vitest setup file: gives each test file @effect/vitest's own `it.effect`, `it.scoped` and the
// rest. Its `layer(…)` assigns testers bound to that layer's runtime onto the module's shared `it`,
// and files that share a worker's modules (isolate: false) share that `it`: a file after one that
// used `layer(L, { excludeTestServices: true })` would run its `it.effect` tests on L's closed
// runtime, without TestClock. The methods are kept as the first file found them and put back
// before every file.
import { it } from "@effect/vitest"

const METHODS = ["effect", "scoped", "live", "scopedLive", "flakyTest", "layer", "prop"] as const
const kept = globalThis as { __mzkEffectVitestIt?: Partial<typeof it> }
kept.__mzkEffectVitestIt ??= Object.fromEntries(METHODS.map((name) => [name, it[name]]))
Object.assign(it, kept.__mzkEffectVitestIt)
