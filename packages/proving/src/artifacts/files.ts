import { ArtifactsRepo, type Digest, ProverFailure } from "@mzk/core"
import { Context, Deferred, Effect, Layer, Option, type Scope, Stream } from "effect"
import { createHash, randomBytes } from "node:crypto"
import { createReadStream } from "node:fs"
import { access, type FileHandle, mkdir, open, rename, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { builtinArtifactFile } from "../catalog.js"

export interface ArtifactFilesOptions {
  /**
   * Where artifacts fetched from the database are kept, one file per digest (default:
   * `<os tmpdir>/mzk-artifacts`). Processes on one host may share it: files appear atomically.
   */
  readonly cacheDir?: string
}

export interface ArtifactFilesStats {
  /** Artifacts read from the database and written to the cache. */
  readonly fetched: number
  /** Cached files found not to match their digest (and so fetched again). */
  readonly corrupt: number
}

/**
 * Artifacts as local files, by digest, so a prover thread can read them: a built-in circuit's
 * from this package's `build/`, anyone else's from the core's `ArtifactsRepo` (the database),
 * cached on local disk. A worker on another host thus proves an uploaded circuit with no shared
 * filesystem, and reads the database once per artifact, not once per proof.
 */
export class ArtifactFiles extends Context.Tag("@mzk/proving/ArtifactFiles")<ArtifactFiles, {
  /** A local file holding exactly the bytes of `digest` (fetched and checked on first use). */
  readonly path: (digest: Digest) => Effect.Effect<string, ProverFailure>
  /** Drops a cached file that turned out not to match its digest; the next `path` fetches it again. */
  readonly invalidate: (digest: Digest) => Effect.Effect<void>
  readonly stats: Effect.Effect<ArtifactFilesStats>
  /** Where the native prover keeps its keys' MSM tables (by key digest): `<cacheDir>/tables`. */
  readonly tableCacheDir: string
}>() {}

export const DEFAULT_ARTIFACT_CACHE_DIR = join(tmpdir(), "mzk-artifacts")

/** The native prover's table cache inside the artifact cache: removing the cache removes both. */
export const TABLES = "tables"

const DIGEST = /^[0-9a-f]{64}$/

const internal = (message: string) => new ProverFailure({ code: "internal", message })

const io = <A>(what: string, f: () => Promise<A>) =>
  Effect.tryPromise({ try: f, catch: (cause) => internal(`${what}: ${cause instanceof Error ? cause.message : String(cause)}`) })

/** A file handle's `write` may write less than it is given; this writes all of `bytes`. */
const writeAll = async (file: FileHandle, bytes: Uint8Array) => {
  for (let offset = 0; offset < bytes.length;) offset += (await file.write(bytes, offset, bytes.length - offset)).bytesWritten
}

const exists = (path: string) => Effect.promise(() => access(path).then(() => true, () => false))

const sha256File = (path: string) =>
  io(`reading ${path}`, async () => {
    const hash = createHash("sha256")
    for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer)
    return hash.digest("hex")
  })

export const makeArtifactFiles = (
  options: ArtifactFilesOptions = {}
): Effect.Effect<ArtifactFiles["Type"], never, ArtifactsRepo | Scope.Scope> =>
  Effect.gen(function*() {
    const repo = yield* ArtifactsRepo
    const scope = yield* Effect.scope
    const dir = options.cacheDir ?? DEFAULT_ARTIFACT_CACHE_DIR
    // Made now, not at the first fetch: the native prover writes its tables into a folder of this
    // one and makes only that last level, so a server that proved only built-in circuits would
    // otherwise build their tables again at every start. Where it cannot be made, the tables are
    // built in memory each time and fetches fail with the reason.
    yield* io(`creating the artifact cache ${dir}`, () => mkdir(dir, { recursive: true, mode: 0o700 })).pipe(
      Effect.catchAll((failure) => Effect.logWarning(`${failure.message}; the prover's tables are not kept between starts`))
    )
    // Checked against their digest once per process; later requests trust the file.
    const verified = new Set<string>()
    const inFlight = new Map<string, Deferred.Deferred<string, ProverFailure>>()
    let fetched = 0
    let corrupt = 0

    /**
     * Streams the artifact from the database into a temp file beside `target`, hashing on the way,
     * and renames it into place only when the bytes match the digest: the heap holds one chunk at a
     * time, and no reader (another thread or process) ever sees a partial or wrong file under the
     * digest's name.
     */
    const fetch = (digest: Digest, target: string) =>
      Effect.gen(function*() {
        const stored = yield* repo.read(digest).pipe(
          Effect.mapError((e) => internal(`Reading artifact ${digest} from the database failed: ${e.message}`))
        )
        if (Option.isNone(stored)) {
          return yield* internal(`Artifact ${digest} is not in the artifact store (the circuit's files are missing from the database)`)
        }
        yield* io(`creating the artifact cache ${dir}`, () => mkdir(dir, { recursive: true, mode: 0o700 }))
        const temp = `${target}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`
        const copy = Effect.acquireUseRelease(
          io(`opening ${temp}`, () => open(temp, "wx", 0o600)),
          (file) =>
            Effect.gen(function*() {
              const hash = createHash("sha256")
              yield* Stream.runForEach(
                stored.value.chunks.pipe(Stream.mapError((e) => internal(`Reading artifact ${digest} from the database failed: ${e.message}`))),
                (chunk) =>
                  Effect.zipRight(
                    Effect.sync(() => hash.update(chunk)),
                    io(`writing ${temp}`, () => writeAll(file, chunk))
                  )
              )
              if (hash.digest("hex") !== digest) {
                return yield* internal(`The artifact store returned bytes for ${digest} that do not match that digest`)
              }
            }),
          (file) => Effect.promise(() => file.close())
        )
        yield* copy.pipe(
          Effect.zipRight(io(`renaming ${temp}`, () => rename(temp, target))),
          Effect.onExit((exit) => (exit._tag === "Failure" ? Effect.promise(() => rm(temp, { force: true })) : Effect.void))
        )
        fetched++
      })

    const resolve = (digest: Digest) =>
      Effect.gen(function*() {
        const target = join(dir, digest)
        if (yield* exists(target)) {
          if ((yield* sha256File(target)) === digest) return target
          corrupt++
          yield* Effect.logWarning(`artifact cache: ${target} does not match its digest; fetching it again`)
          yield* io(`removing ${target}`, () => rm(target, { force: true }))
        }
        yield* fetch(digest, target)
        return target
      }).pipe(Effect.tap(() => Effect.sync(() => verified.add(digest))))

    const path = (digest: Digest): Effect.Effect<string, ProverFailure> =>
      Effect.gen(function*() {
        const builtin = builtinArtifactFile(digest)
        if (Option.isSome(builtin)) return builtin.value
        // The digest becomes a file name: anything but 64 hex digits could leave the cache dir.
        if (!DIGEST.test(digest)) return yield* internal(`Not an artifact digest: ${JSON.stringify(digest)}`)
        const target = join(dir, digest)
        if (verified.has(digest) && (yield* exists(target))) return target
        verified.delete(digest)
        let pending = inFlight.get(digest)
        if (pending === undefined) {
          const created = yield* Deferred.make<string, ProverFailure>()
          pending = created
          inFlight.set(digest, created)
          // Forked into the layer's scope: one caller giving up must not fail the others waiting.
          yield* resolve(digest).pipe(
            Effect.exit,
            Effect.flatMap((exit) => Deferred.complete(created, exit)),
            Effect.ensuring(Effect.sync(() => inFlight.delete(digest))),
            Effect.forkIn(scope)
          )
        }
        return yield* Deferred.await(pending)
      })

    const invalidate = (digest: Digest) =>
      Effect.gen(function*() {
        if (Option.isSome(builtinArtifactFile(digest)) || !DIGEST.test(digest)) return
        verified.delete(digest)
        corrupt++
        yield* Effect.promise(() => rm(join(dir, digest), { force: true }))
      })

    return { path, invalidate, stats: Effect.sync(() => ({ fetched, corrupt })), tableCacheDir: join(dir, TABLES) }
  })

/** `ArtifactFiles` over the core's `ArtifactsRepo`. */
export const ArtifactFilesLive = (options: ArtifactFilesOptions = {}): Layer.Layer<ArtifactFiles, never, ArtifactsRepo> =>
  Layer.scoped(ArtifactFiles, makeArtifactFiles(options))
