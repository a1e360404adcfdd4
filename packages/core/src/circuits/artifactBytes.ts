import { Stream } from "effect"
import type { StorageError } from "../kernel/errors.js"

/** Bytes of an artifact by position: `read(start, end)` streams bytes `start` to `end - 1`, never the whole at once. */
export interface ArtifactBytes {
  readonly size: number
  readonly read: (start: number, end: number) => Stream.Stream<Uint8Array, StorageError>
}

/** Bytes held in memory (the verification key's JSON). */
export const bytesInMemory = (bytes: Uint8Array): ArtifactBytes => ({
  size: bytes.length,
  read: (start, end) => Stream.make(bytes.subarray(start, end))
})
