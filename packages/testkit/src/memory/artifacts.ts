import { ArtifactsRepo, type ArtifactStreams, type Digest, StorageError, wholeArtifacts, writeChunks } from "@mzk/core"
import { Effect, Option, Stream } from "effect"
import { createHash, randomBytes } from "node:crypto"
import type { MemoryDb } from "./db.js"

/** The artifacts table's name, shared with the circuits repository, which deletes what no live circuit refers to. */
export const ARTIFACTS_TABLE = "artifacts"

/** A stored artifact: its chunks, as the SQL adapters keep them, so the same boundaries are exercised. */
export interface MemoryArtifact {
  readonly size: number
  readonly chunks: ReadonlyArray<Uint8Array>
}

/** The SQL adapters' chunk size, so conformance tests cross the same boundaries on every store. */
const CHUNK_BYTES = 1024 * 1024

export const memoryArtifacts = (db: MemoryDb) => {
  const artifacts = db.table<MemoryArtifact>(ARTIFACTS_TABLE)
  // Outside the tables: a staging area is no row, and a rollback need not restore it.
  const staging = new Map<string, Array<Uint8Array>>()

  const stage: ArtifactStreams["stage"] = (chunks) =>
    Effect.gen(function*() {
      const id = `staging:${randomBytes(16).toString("hex")}`
      const pieces: Array<Uint8Array> = []
      staging.set(id, pieces)
      yield* Effect.addFinalizer(() => Effect.sync(() => staging.delete(id)))
      // Each piece is a fresh buffer (writeChunks' contract), so keeping it copies nothing the caller reuses.
      const written = yield* writeChunks(chunks, CHUNK_BYTES, (_idx, bytes) => Effect.sync(() => void pieces.push(bytes)), () => {
        const hash = createHash("sha256")
        return { update: (bytes) => void hash.update(bytes), digest: () => hash.digest("hex") }
      }, true)
      return { staging: id, ...written }
    })

  const publish: ArtifactStreams["publish"] = (staged) =>
    db.write(Effect.suspend(() => {
      const pieces = staging.get(staged.staging)
      if (pieces === undefined) {
        return new StorageError({ message: `Artifact ${staged.digest}: its staging area is gone (its scope ended)` })
      }
      staging.delete(staged.staging)
      if (!artifacts.has(staged.digest)) artifacts.set(staged.digest, { size: staged.size, chunks: pieces })
      return Effect.succeed(staged.digest)
    }))

  const read: ArtifactStreams["read"] = (digest: Digest) =>
    Effect.sync(() =>
      Option.map(Option.fromNullable(artifacts.get(digest)), (stored) => ({
        size: stored.size,
        // Copies: a reader may write into what it is given.
        chunks: Stream.fromIterable(stored.chunks).pipe(Stream.map((chunk) => Uint8Array.from(chunk)))
      }))
    )

  const size: ArtifactStreams["size"] = (digest) => Effect.sync(() => Option.map(Option.fromNullable(artifacts.get(digest)), (stored) => stored.size))

  return ArtifactsRepo.of(wholeArtifacts({ stage, publish, read, size }))
}
