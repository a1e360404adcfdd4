import { Stream } from "effect"
import type { StorageError } from "../kernel/errors.js"

/** Bytes of an artifact by position: `read(start, end)` streams bytes `start` to `end - 1`, never the whole at once. */
export interface ArtifactBytes {
  readonly size: number
  readonly read: (start: number, end: number) => Stream.Stream<Uint8Array, StorageError>
}

/**
 * A stream's bytes from `start` to `end - 1`, for a store that reads only from the beginning:
 * what comes before is read and dropped, chunk by chunk, so memory never holds more than one.
 */
export const sliceBytes = <E>(chunks: Stream.Stream<Uint8Array, E>, start: number, end: number): Stream.Stream<Uint8Array, E> =>
  chunks.pipe(
    // Each chunk with the position it starts at, so the cut holds however the stream batches them.
    Stream.mapAccum(0, (from, chunk) => [from + chunk.length, { from, chunk }] as const),
    Stream.takeWhile(({ from }) => from < end),
    Stream.map(({ chunk, from }) => chunk.subarray(Math.max(0, start - from), Math.max(0, Math.min(chunk.length, end - from)))),
    Stream.filter((cut) => cut.length > 0)
  )

/** Bytes held in memory (the verification key's JSON). */
export const bytesInMemory = (bytes: Uint8Array): ArtifactBytes => ({
  size: bytes.length,
  read: (start, end) => Stream.make(bytes.subarray(start, end))
})
