import { describe, expect, it } from "@effect/vitest"
import { AbandonedStagingSweeper, ArtifactsRepo, DEFAULT_CIRCUITS_CONFIG } from "@mzk/core"
import { testCore } from "@mzk/testkit"
import { Effect, Exit, Layer, Scope, Stream, TestClock } from "effect"

const HOUR = 3_600_000
const bytes = (n: number, seed: number) => Uint8Array.from({ length: n }, (_, i) => (i * 7 + seed) & 0xff)

describe("the abandoned upload staging sweep (TestClock)", () => {
  it.scoped("deletes, hourly, what processes killed mid-upload staged a day or more ago, and nothing younger", () =>
    Effect.gen(function*() {
      const artifacts = yield* ArtifactsRepo
      yield* Layer.build(AbandonedStagingSweeper)
      // Scopes never closed: a stage's own finalizer never runs when its process died.
      const dead = yield* Scope.make()
      const old = yield* Scope.extend(artifacts.stage(Stream.make(bytes(2_500_000, 1))), dead)
      yield* TestClock.adjust(12 * HOUR)
      const younger = yield* Scope.extend(artifacts.stage(Stream.make(bytes(10_000, 2))), dead)
      yield* TestClock.adjust(DEFAULT_CIRCUITS_CONFIG.abandonedStagingMs - 12 * HOUR + 2 * HOUR)

      // 26 hours on: the older stage's chunks are gone, the 14-hour-old one is whole.
      expect(yield* Effect.either(artifacts.publish(old))).toMatchObject({ _tag: "Left", left: { _tag: "StorageError" } })
      expect(yield* artifacts.publish(younger)).toBe(younger.digest)
      expect((yield* artifacts.get(younger.digest)).pipe((found) => found._tag === "Some" && found.value.length)).toBe(10_000)
      yield* Scope.close(dead, Exit.void)
    }).pipe(Effect.provide(testCore())))
})
