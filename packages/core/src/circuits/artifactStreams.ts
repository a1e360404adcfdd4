import { Effect, Option, type Scope, Stream } from "effect"
import type { StorageError } from "../kernel/errors.js"
import type { Timestamp } from "../kernel/time.js"
import type { Digest } from "./circuit.js"
import type { ZkeySystem } from "./zkeyHeader.js"

/**
 * Bytes written by `ArtifactsRepo.stage`: stored under `staging`, where no reader looks, until
 * `publish` files them under their digest. What a half-written or refused upload leaves is only
 * ever a staging area, which the stage's scope deletes.
 */
export interface StagedArtifact {
  readonly staging: string
  readonly digest: Digest
  readonly size: number
  /** How many chunks were written, the last one possibly short (none for empty bytes). */
  readonly chunks: number
  /**
   * What the bytes say read as a snarkjs zkey, where they were staged as an upload
   * (`Circuits.stageUpload` scans them as they pass): what an upload's check knows of a file it
   * does not hold. Absent where nothing scanned them.
   */
  readonly zkeySystem?: ZkeySystem
}

/** A stored artifact, to read chunk by chunk; a stream fails when a chunk is missing or sizes disagree. */
export interface ArtifactReader {
  readonly size: number
  /** Every byte, in order (`range(0)`). */
  readonly chunks: Stream.Stream<Uint8Array, StorageError>
  /**
   * Bytes `start` to `end - 1` (default: to the last byte), read from the chunk that holds `start`
   * on, so a download resumed far into a large artifact reads only what is left. The offsets are
   * cut to the artifact: a start at or past its end, or an end at or before the start, gives no bytes.
   */
  readonly range: (start: number, end?: number) => Stream.Stream<Uint8Array, StorageError>
}

/** What a storage adapter implements; `wholeArtifacts` derives the rest of `ArtifactsRepo` from it. */
export interface ArtifactStreams {
  /**
   * Writes `chunks` to a new staging area as they arrive, re-cut into the store's chunk size and
   * hashed on the way, so memory holds at most one stored chunk besides what the stream holds. The
   * scope's end deletes the staging area (nothing, once published).
   */
  readonly stage: <E>(chunks: Stream.Stream<Uint8Array, E>) => Effect.Effect<StagedArtifact, E | StorageError, Scope.Scope>
  /**
   * Files staged bytes under their digest (in the caller's transaction, if any): a digest already
   * stored is kept and the staged copy dropped, so the same bytes are stored once.
   */
  readonly publish: (staged: StagedArtifact) => Effect.Effect<Digest, StorageError>
  /** The artifact `digest`, to be read chunk by chunk; none when unknown. */
  readonly read: (digest: Digest) => Effect.Effect<Option.Option<ArtifactReader>, StorageError>
  /** The stored size of `digest` in bytes; none when unknown. */
  readonly size: (digest: Digest) => Effect.Effect<Option.Option<number>, StorageError>
  /**
   * Deletes the staging areas begun before `before` that were neither published nor dropped: what
   * a process killed mid-upload leaves behind (its scope never ended, so nothing else ever would).
   * Returns how many chunks it deleted.
   */
  readonly dropAbandoned: (before: Timestamp) => Effect.Effect<number, StorageError>
}

/**
 * An incremental SHA-256, which the adapter brings (node:crypto's `createHash("sha256")`): the core
 * does no I/O and carries no hash of its own for bytes this large.
 */
export interface IncrementalSha256 {
  readonly update: (bytes: Uint8Array) => void
  /** The digest in lowercase hex, once everything was given. */
  readonly digest: () => string
}

/**
 * Re-cuts `chunks` into pieces of `chunkBytes` (the last one shorter), hands each to `write` with
 * its index before reading on, and hashes everything on the way: the one place where a stream of
 * bytes becomes a stored artifact's chunks, for every adapter. With `keeps` each piece is a fresh
 * buffer the writer may keep (a store in memory); without it one buffer is reused once `write` has
 * completed (a database copies what it binds), which spares the garbage collector a megabyte per
 * chunk: what a 0.5 GB upload's peak memory is mostly made of.
 */
export const writeChunks = <E>(
  chunks: Stream.Stream<Uint8Array, E>,
  chunkBytes: number,
  write: (idx: number, bytes: Uint8Array) => Effect.Effect<void, StorageError>,
  sha256: () => IncrementalSha256,
  keeps = false
): Effect.Effect<{ readonly digest: Digest; readonly size: number; readonly chunks: number }, E | StorageError> =>
  Effect.suspend(() => {
    const hash = sha256()
    let size = 0
    let written = 0
    let piece = new Uint8Array(chunkBytes)
    let fill = 0
    const take = (): Effect.Effect<void, StorageError> => {
      const full = fill === chunkBytes ? piece : piece.subarray(0, fill)
      if (keeps) piece = new Uint8Array(chunkBytes)
      fill = 0
      return write(written++, full)
    }
    const consume = (chunk: Uint8Array) =>
      Effect.suspend(() => {
        hash.update(chunk)
        size += chunk.length
        // Each full piece is written before the next is filled: the buffer may be the same one.
        const fillFrom = (offset: number): Effect.Effect<void, StorageError> => {
          while (offset < chunk.length) {
            const n = Math.min(chunkBytes - fill, chunk.length - offset)
            piece.set(chunk.subarray(offset, offset + n), fill)
            fill += n
            offset += n
            if (fill === chunkBytes) {
              const next = offset
              return Effect.flatMap(take(), () => fillFrom(next))
            }
          }
          return Effect.void
        }
        return fillFrom(0)
      })
    return Stream.runForEach(chunks, consume).pipe(
      Effect.zipRight(Effect.suspend(() => (fill > 0 ? take() : Effect.void))),
      Effect.map(() => ({ digest: hash.digest() as Digest, size, chunks: written }))
    )
  })

/** Every chunk of a reader in one buffer, checked against the stored size. */
const collect = (digest: Digest, reader: ArtifactReader) =>
  Effect.suspend(() => {
    const bytes = new Uint8Array(reader.size)
    let offset = 0
    return Stream.runForEach(reader.chunks, (chunk) =>
      Effect.sync(() => {
        // The reader checks sizes too; this guards the buffer against a reader that does not.
        if (offset + chunk.length > bytes.length) throw new RangeError(`artifact ${digest} is longer than its stored size`)
        bytes.set(chunk, offset)
        offset += chunk.length
      })).pipe(Effect.as(bytes))
  })

/**
 * `ArtifactsRepo` from an adapter's streams: `write` is stage then publish, `put` a write of one
 * chunk, `get` the collected read. One rule for whole and streamed artifacts alike.
 */
export const wholeArtifacts = (streams: ArtifactStreams) => {
  const write = <E>(chunks: Stream.Stream<Uint8Array, E>) =>
    Effect.scoped(Effect.flatMap(streams.stage(chunks), (staged) => Effect.as(streams.publish(staged), staged)))
  return {
    ...streams,
    write,
    put: (bytes: Uint8Array) => Effect.map(write(Stream.make(bytes)), (staged) => staged.digest),
    get: (digest: Digest) =>
      Effect.flatMap(streams.read(digest), (found) =>
        Option.isNone(found) ? Effect.succeedNone : Effect.asSome(collect(digest, found.value)))
  }
}
