import { ArtifactsRepo, type Digest } from "@mzk/core"
import { Effect, Option } from "effect"
import { createHash } from "node:crypto"
import type { MemoryDb } from "./db.js"

/** The artifacts table's name, shared with the circuits repository, which deletes what no live circuit refers to. */
export const ARTIFACTS_TABLE = "artifacts"

export const memoryArtifacts = (db: MemoryDb) => {
  const artifacts = db.table<Uint8Array>(ARTIFACTS_TABLE)
  return ArtifactsRepo.of({
    put: (bytes) =>
      db.write(Effect.sync(() => {
        const digest = createHash("sha256").update(bytes).digest("hex") as Digest
        // A copy: the caller may reuse its buffer.
        if (!artifacts.has(digest)) artifacts.set(digest, Uint8Array.from(bytes))
        return digest
      })),
    get: (digest) => Effect.sync(() => Option.map(Option.fromNullable(artifacts.get(digest)), (bytes) => Uint8Array.from(bytes))),
    size: (digest) => Effect.sync(() => Option.map(Option.fromNullable(artifacts.get(digest)), (bytes) => bytes.length))
  })
}
