import { ArtifactsRepo, type Digest, wholeArtifacts } from "@mzk/core"
import { Effect, Option, Stream } from "effect"
import { createHash } from "node:crypto"

/**
 * An `ArtifactsRepo` over a plain Map of bytes by digest, which the caller may fill or corrupt
 * directly: for prover tests and benches that need only the port, not a store's transactions.
 */
export const artifactsInMap = (stored: Map<string, Uint8Array> = new Map()) => {
  const staged = new Map<string, Uint8Array>()
  return ArtifactsRepo.of(wholeArtifacts({
    stage: (chunks) =>
      Effect.map(Stream.runCollect(chunks), (collected) => {
        const bytes = Buffer.concat([...collected])
        const digest = createHash("sha256").update(bytes).digest("hex") as Digest
        const staging = `staging:${staged.size}:${digest}`
        staged.set(staging, new Uint8Array(bytes))
        return { staging, digest, size: bytes.length, chunks: 1 }
      }),
    publish: (artifact) =>
      Effect.sync(() => {
        const bytes = staged.get(artifact.staging)
        staged.delete(artifact.staging)
        if (bytes !== undefined && !stored.has(artifact.digest)) stored.set(artifact.digest, bytes)
        return artifact.digest
      }),
    read: (digest) =>
      Effect.sync(() =>
        Option.map(Option.fromNullable(stored.get(digest)), (bytes) => ({
          size: bytes.length,
          chunks: Stream.make(bytes),
          range: (start: number, end = bytes.length) => (start < end && start < bytes.length ? Stream.make(bytes.subarray(Math.max(0, start), end)) : Stream.empty)
        }))
      ),
    size: (digest) => Effect.sync(() => Option.fromNullable(stored.get(digest)?.length)),
    // Nothing here outlives its process, so nothing is ever abandoned.
    dropAbandoned: () => Effect.succeed(0)
  }))
}
