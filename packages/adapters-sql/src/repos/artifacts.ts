import { ArtifactsRepo, type Digest, StorageError } from "@mzk/core"
import { Effect, Option } from "effect"
import { createHash } from "node:crypto"
import type { SqlConnection } from "../connection.js"

/** Bytes per stored chunk: rows stay well under every driver's and database's value limits. */
export const ARTIFACT_CHUNK_BYTES = 1024 * 1024

/** How often `put` retries when the row it found was deleted under it (a removal that freed the same bytes). */
const PUT_TRIES = 3

export const sqlArtifacts = (conn: SqlConnection) => {
  const { dialect } = conn

  /**
   * Writes the row and its chunks, or finds the row already there and holds it until the
   * transaction ends, so a removal deciding that nothing refers to these bytes waits for the
   * caller's circuit to commit (and then sees it). A row deleted meanwhile is written again.
   */
  const store = (digest: Digest, bytes: Uint8Array): Effect.Effect<void, StorageError> =>
    Effect.gen(function*() {
      const chunks = Math.ceil(bytes.length / ARTIFACT_CHUNK_BYTES)
      for (let attempt = 0; attempt < PUT_TRIES; attempt++) {
        const inserted = yield* conn.affected((db) =>
          db.insertInto("artifacts").values({ digest, size: bytes.length, chunks }).onConflict((oc) => oc.column("digest").doNothing())
        )
        if (inserted > 0) {
          for (let idx = 0; idx < chunks; idx++) {
            const part = bytes.subarray(idx * ARTIFACT_CHUNK_BYTES, (idx + 1) * ARTIFACT_CHUNK_BYTES)
            // Drivers bind a Buffer as bytes; a view shares the caller's memory without a copy.
            const data = Buffer.from(part.buffer, part.byteOffset, part.byteLength)
            yield* conn.execute((db) => db.insertInto("artifact_chunks").values({ digest, idx, data }))
          }
          return
        }
        const held = yield* conn.first((db) => db.selectFrom("artifacts").select("digest").where("digest", "=", digest).$call(dialect.lockRows))
        if (Option.isSome(held)) return
      }
      return yield* new StorageError({ message: `Artifact ${digest} could not be stored: it was deleted under every attempt` })
    })

  return ArtifactsRepo.of({
    put: (bytes) => {
      const digest = createHash("sha256").update(bytes).digest("hex") as Digest
      return Effect.as(conn.transaction(store(digest, bytes)), digest)
    },
    get: (digest) =>
      Effect.gen(function*() {
        const meta = yield* conn.first((db) => db.selectFrom("artifacts").select(["size", "chunks"]).where("digest", "=", digest))
        if (Option.isNone(meta)) return Option.none()
        const rows = yield* conn.rows((db) =>
          db.selectFrom("artifact_chunks").select(["idx", "data"]).where("digest", "=", digest).orderBy("idx")
        )
        const size = Number(meta.value.size)
        if (rows.length !== meta.value.chunks) {
          return yield* new StorageError({ message: `Artifact ${digest} has ${rows.length} of its ${meta.value.chunks} chunks` })
        }
        const bytes = new Uint8Array(size)
        let offset = 0
        for (const row of rows) {
          bytes.set(row.data, offset)
          offset += row.data.length
        }
        if (offset !== size) return yield* new StorageError({ message: `Artifact ${digest} has ${offset} of its ${size} bytes` })
        return Option.some(bytes)
      }),
    size: (digest) =>
      conn.first((db) => db.selectFrom("artifacts").select("size").where("digest", "=", digest))
        .pipe(Effect.map(Option.map((row) => Number(row.size))))
  })
}
