import { ArtifactsRepo, type ArtifactStreams, type Digest, now, StorageError, type Timestamp, wholeArtifacts, writeChunks } from "@mzk/core"
import { Effect, Option, Stream } from "effect"
import { createHash, randomBytes } from "node:crypto"
import type { SqlConnection } from "../connection.js"

/** Bytes per stored chunk: rows stay well under every driver's and database's value limits. */
export const ARTIFACT_CHUNK_BYTES = 1024 * 1024

/** How often `publish` retries when the row it found was deleted under it (a removal that freed the same bytes). */
const PUBLISH_TRIES = 3

/**
 * Staged chunks wait in `artifact_chunks` under a staging id in the digest column: no `artifacts`
 * row names it, so no reader finds them, and publishing renames them in one statement instead of
 * copying them (no schema change was needed). A process that dies mid-upload leaves its staging
 * rows behind; their id names when the stage began (`staging:<timestamp>:<random>`, sorting as
 * text in time order), so `dropAbandoned` finds the old ones with one range over the primary key.
 */
const STAGING = "staging:"
const stagingId = (at: Timestamp) => `${STAGING}${at}:${randomBytes(16).toString("hex")}`

const sha256 = () => {
  const hash = createHash("sha256")
  return { update: (bytes: Uint8Array) => void hash.update(bytes), digest: () => hash.digest("hex") }
}

export const sqlArtifacts = (conn: SqlConnection) => {
  const { dialect } = conn

  const dropStaging = (staging: string) => conn.execute((db) => db.deleteFrom("artifact_chunks").where("digest", "=", staging))

  const stage: ArtifactStreams["stage"] = (chunks) =>
    Effect.gen(function*() {
      const staging = stagingId(yield* now)
      // Outside a transaction each chunk commits on its own, so an upload never holds the
      // database's write lock while the client sends; inside one, the rollback drops them anyway.
      yield* Effect.addFinalizer(() =>
        dropStaging(staging).pipe(
          Effect.catchAll((e) => Effect.logWarning(`artifacts: staging area ${staging} could not be dropped: ${e.message}`))
        )
      )
      const written = yield* writeChunks(chunks, ARTIFACT_CHUNK_BYTES, (idx, bytes) =>
        conn.execute((db) =>
          // Drivers bind a Buffer as bytes; a view shares the piece's memory without a copy.
          db.insertInto("artifact_chunks").values({ digest: staging, idx, data: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) })
        ), sha256)
      return { staging, ...written }
    })

  /**
   * Writes the row and renames the staged chunks to it, or finds the row already there and holds
   * it until the transaction ends, so a removal deciding that nothing refers to these bytes waits
   * for the caller's circuit to commit (and then sees it). A row deleted meanwhile is written again.
   */
  const publish: ArtifactStreams["publish"] = (staged) =>
    conn.transaction(Effect.gen(function*() {
      const { digest } = staged
      for (let attempt = 0; attempt < PUBLISH_TRIES; attempt++) {
        const inserted = yield* conn.affected((db) =>
          db.insertInto("artifacts").values({ digest, size: staged.size, chunks: staged.chunks })
            .onConflict((oc) => oc.column("digest").doNothing())
        )
        if (inserted > 0) {
          const moved = yield* conn.affected((db) => db.updateTable("artifact_chunks").set({ digest }).where("digest", "=", staged.staging))
          if (moved !== staged.chunks) {
            return yield* new StorageError({ message: `Artifact ${digest}: ${moved} of its ${staged.chunks} staged chunks were found` })
          }
          return digest
        }
        const held = yield* conn.first((db) => db.selectFrom("artifacts").select("digest").where("digest", "=", digest).$call(dialect.lockRows))
        if (Option.isSome(held)) {
          yield* dropStaging(staged.staging)
          return digest
        }
      }
      return yield* new StorageError({ message: `Artifact ${digest} could not be stored: it was deleted under every attempt` })
    })) as Effect.Effect<Digest, StorageError>

  /**
   * Every chunk but the last holds `ARTIFACT_CHUNK_BYTES` (`writeChunks` cuts them so), which is
   * what places a byte: offset `n` is in chunk `floor(n / ARTIFACT_CHUNK_BYTES)`. A range reads
   * from that chunk on, one query per chunk, so it holds one chunk at a time and never reads the
   * chunks before its start. A chunk of another length than its place says fails the read.
   */
  const read: ArtifactStreams["read"] = (digest) =>
    Effect.map(
      conn.first((db) => db.selectFrom("artifacts").select(["size", "chunks"]).where("digest", "=", digest)),
      Option.map((meta) => {
        const size = Number(meta.size)
        const count = meta.chunks
        const chunk = (idx: number) =>
          Effect.flatMap(
            conn.first((db) => db.selectFrom("artifact_chunks").select("data").where("digest", "=", digest).where("idx", "=", idx)),
            (row): Effect.Effect<Uint8Array, StorageError> => {
              if (Option.isNone(row)) return new StorageError({ message: `Artifact ${digest} is missing chunk ${idx} of ${count}` })
              const expected = Math.min(ARTIFACT_CHUNK_BYTES, size - idx * ARTIFACT_CHUNK_BYTES)
              if (row.value.data.length !== expected) {
                return new StorageError({ message: `Artifact ${digest}'s chunk ${idx} has ${row.value.data.length} bytes, not ${expected}` })
              }
              return Effect.succeed(row.value.data)
            }
          )
        const range = (start: number, end = size): Stream.Stream<Uint8Array, StorageError> => {
          if (count !== Math.ceil(size / ARTIFACT_CHUNK_BYTES)) {
            return Stream.fail(new StorageError({ message: `Artifact ${digest} has ${count} chunks for its ${size} bytes` }))
          }
          const from = Math.max(0, start)
          const to = Math.min(size, end)
          if (from >= to) return Stream.empty
          const first = Math.floor(from / ARTIFACT_CHUNK_BYTES)
          const last = Math.floor((to - 1) / ARTIFACT_CHUNK_BYTES)
          return Stream.range(first, last).pipe(
            Stream.mapEffect((idx) =>
              Effect.map(chunk(idx), (data) => {
                const at = idx * ARTIFACT_CHUNK_BYTES
                return from <= at && at + data.length <= to ? data : data.subarray(Math.max(0, from - at), Math.min(data.length, to - at))
              })
            )
          )
        }
        return { size, chunks: range(0), range }
      })
    )

  const size: ArtifactStreams["size"] = (digest) =>
    conn.first((db) => db.selectFrom("artifacts").select("size").where("digest", "=", digest))
      .pipe(Effect.map(Option.map((row) => Number(row.size))))

  // A digest is lowercase hex, so no published artifact falls in the range of the staging ids.
  const dropAbandoned: ArtifactStreams["dropAbandoned"] = (before) =>
    conn.affected((db) => db.deleteFrom("artifact_chunks").where("digest", ">=", STAGING).where("digest", "<", `${STAGING}${before}`))

  return ArtifactsRepo.of(wholeArtifacts({ stage, publish, read, size, dropAbandoned }))
}
