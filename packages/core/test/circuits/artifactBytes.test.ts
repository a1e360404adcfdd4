import { describe, expect, it } from "@effect/vitest"
import { sliceBytes } from "@mzk/core"
import { Chunk, Effect, Stream } from "effect"

/** `bytes` cut into pieces of the given sizes, as a store's chunks arrive. */
const chunked = (bytes: Uint8Array, sizes: ReadonlyArray<number>) => {
  const pieces: Array<Uint8Array> = []
  let at = 0
  for (const size of sizes) {
    pieces.push(bytes.subarray(at, at + size))
    at += size
  }
  return pieces
}

const joined = (chunks: Chunk.Chunk<Uint8Array>) => new Uint8Array(Chunk.toArray(chunks).flatMap((chunk) => [...chunk]))

describe("sliceBytes: a range of an artifact read from a store that reads from the start", () => {
  it.effect("gives exactly bytes start to end - 1, however the chunks fall and the stream batches them", () =>
    Effect.gen(function*() {
      const bytes = Uint8Array.from({ length: 100 }, (_, i) => i)
      const layouts = [[100], [1, 99], [10, 10, 10, 10, 10, 10, 10, 10, 10, 10], [33, 33, 34], [99, 1]]
      const ranges = [[0, 100], [0, 1], [99, 100], [10, 20], [9, 11], [33, 67], [50, 50], [0, 0]] as const
      for (const layout of layouts) {
        const pieces = chunked(bytes, layout)
        for (const [start, end] of ranges) {
          // One element per pull, and all of them in one batch: the cut must not depend on it.
          for (const stream of [Stream.fromIterable(pieces), Stream.fromChunk(Chunk.fromIterable(pieces))]) {
            const got = joined(yield* Stream.runCollect(sliceBytes(stream, start, end)))
            expect([...got], `${layout} ${start}-${end}`).toEqual([...bytes.subarray(start, end)])
          }
        }
      }
    }))

  it.effect("stops reading once the range is sent: the chunks past it are never pulled", () =>
    Effect.gen(function*() {
      let pulled = 0
      const store = Stream.range(0, 99).pipe(
        Stream.rechunk(1),
        Stream.map((i) => {
          pulled++
          return Uint8Array.of(i, i)
        })
      )
      const got = joined(yield* Stream.runCollect(sliceBytes(store, 4, 8)))
      expect([...got]).toEqual([2, 2, 3, 3])
      // Chunks 0–3 hold bytes 0–7; the fifth is read to learn the range ended, no more.
      expect(pulled).toBeLessThanOrEqual(5)
    }))
})
