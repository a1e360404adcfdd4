/**
 * What storing an artifact and fetching it into the prover's disk cache cost this process's memory
 * (not a test): SQLite in a temporary file, one artifact of `MiB` mebibytes written as a stream
 * of 1 MiB pieces (`ArtifactsRepo.write`), fetched into an empty cache (`ArtifactFiles.path`:
 * streamed to a temp file, hashed, renamed), then read whole (`ArtifactsRepo.get`, what the cache
 * did before). Each step's memory is this process's peak RSS (`VmHWM`, reset through
 * /proc/self/clear_refs before it) over its RSS before it:
 *
 *   pnpm bench packages/server/bench/artifact-cache.ts [MiB=512]
 *
 * `--smoke` (CI's check that the bench runs, scripts/test/benchSmoke.test.ts): one 1 MiB artifact.
 */
import { SqliteStore } from "@mzk/adapters-sqlite"
import { ArtifactFiles, ArtifactFilesLive } from "@mzk/proving"
import { ArtifactsRepo } from "@mzk/core"
import { Effect, Layer, Option, Stream } from "effect"
import { mkdtempSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { performance } from "node:perf_hooks"
import { memoryOf, resetPeak } from "../test/circuits/bigUpload.js"

const MiB = 1024 * 1024
const SMOKE = process.argv.includes("--smoke")
const SIZE_MIB = SMOKE ? 1 : Number(process.argv[2] ?? 512)
const dir = mkdtempSync(join(tmpdir(), "mzk-cache-bench-"))

/** Runs `step`, printing its time and the growth of this process's peak RSS. */
const measured = <A, E, R>(label: string, step: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    global.gc?.()
    const before = memoryOf(process.pid)
    const reset = resetPeak(process.pid)
    const start = performance.now()
    const result = yield* step
    const seconds = (performance.now() - start) / 1000
    const after = memoryOf(process.pid)
    console.log(
      `${label.padEnd(34)} ${seconds.toFixed(1).padStart(5)} s  ${(SIZE_MIB / seconds).toFixed(0).padStart(4)} MiB/s  ` +
        `RSS ${(before.rss / MiB).toFixed(0)} → peak ${(after.peak / MiB).toFixed(0)} MiB (growth ${((after.peak - before.rss) / MiB).toFixed(0)} MiB` +
        `${reset ? "" : ", peak not reset"})`
    )
    return result
  })

// One piece at a time: `Stream.range` emits its numbers in chunks of 4096, which `map` would turn
// into that many pieces at once.
const pieces = Stream.range(0, SIZE_MIB - 1).pipe(Stream.rechunk(1), Stream.map((i) => {
  const piece = Buffer.alloc(MiB, i & 0xff)
  piece.writeUInt32LE(i, 0)
  return new Uint8Array(piece.buffer, piece.byteOffset, piece.byteLength)
}))

const store = SqliteStore({ filename: join(dir, "mzk.db") })
const layer = Layer.provideMerge(ArtifactFilesLive({ cacheDir: join(dir, "cache") }), store)

console.log(`artifact cache bench: one ${SIZE_MIB} MiB artifact on SQLite, node ${process.version}`)
try {
  await Effect.runPromise(Effect.gen(function*() {
    const artifacts = yield* ArtifactsRepo
    const files = yield* ArtifactFiles
    const written = yield* measured("write (stream of 1 MiB pieces)", artifacts.write(pieces))
    const path = yield* measured("fetch into the disk cache", files.path(written.digest))
    if (statSync(path).size !== written.size) throw new Error("the cached file has another size")
    const whole = yield* measured("get (whole bytes, the old fetch)", artifacts.get(written.digest))
    if (Option.getOrThrow(whole).length !== written.size) throw new Error("get gave another size")
  }).pipe(Effect.provide(layer)))
} finally {
  rmSync(dir, { recursive: true, force: true })
}
