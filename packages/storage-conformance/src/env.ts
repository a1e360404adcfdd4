import type { Vitest } from "@effect/vitest"
import type { Layer } from "effect"
import type { testCore } from "@mzk/testkit"

/** What every conformance test may use: the core services over the store under test. */
export type CoreEnv = Layer.Layer.Success<ReturnType<typeof testCore>>
export type ConformanceIt = Vitest.MethodsNonLive<CoreEnv>
