// Uploaded circuits end to end on the prover side: artifacts that exist only in an ArtifactsRepo
// reach a prover thread through the disk cache (fetched once, written atomically, checked against
// their digest, fetched again when corrupt), threads keep the circuits they load under a memory
// budget, and every proof made here verifies, with the pool and with snarkjs, on each engine.
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { type AccountId, ArtifactsRepo, type Circuit, type Digest, ProverFailure, wholeArtifacts } from "@mzk/core"
import { loadNativeProver } from "@mzk/prover-native"
import { ConfigProvider, Effect, Exit, Layer, Option, Stream } from "effect"
import { createHash } from "node:crypto"
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as snarkjs from "snarkjs"
import { ArtifactFiles, ArtifactFilesLive, makeArtifactFiles, TABLES } from "../../src/artifacts/files.js"
import { buildFilesOf, builtinCircuit, FIELD_MODULUS } from "../../src/catalog.js"
import { type ProverPool, type ProverPoolOptions, makeProverPool, parseBytes, type ProverEngine } from "../../src/prove/pool.js"

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex") as Digest
const builtin = (name: string) => Option.getOrThrow(builtinCircuit(name))

/** A content-addressed store in a Map, counting reads: the port's whole contract, nothing more. */
const memoryArtifacts = () => {
  const bytes = new Map<string, Uint8Array>()
  const reads = new Map<string, number>()
  const staged = new Map<string, Uint8Array>()
  const layer = Layer.succeed(ArtifactsRepo, ArtifactsRepo.of(wholeArtifacts({
    stage: (chunks) =>
      Effect.map(Stream.runCollect(chunks), (collected) => {
        const all = Buffer.concat([...collected])
        const digest = sha256(all)
        staged.set(`staging:${digest}`, new Uint8Array(all))
        return { staging: `staging:${digest}`, digest, size: all.length, chunks: 1 }
      }),
    publish: (artifact) =>
      Effect.sync(() => {
        bytes.set(artifact.digest, staged.get(artifact.staging)!)
        return artifact.digest
      }),
    // Read in two pieces, so the cache meets more than one chunk.
    read: (digest) =>
      Effect.sync(() => {
        reads.set(digest, (reads.get(digest) ?? 0) + 1)
        return Option.map(Option.fromNullable(bytes.get(digest)), (b) => ({
          size: b.length,
          chunks: Stream.make(b.subarray(0, b.length >> 1), b.subarray(b.length >> 1)),
          range: (start: number, end?: number) => Stream.make(b.subarray(start, end))
        }))
      }),
    size: (digest) => Effect.sync(() => Option.fromNullable(bytes.get(digest)?.length)),
    dropAbandoned: () => Effect.succeed(0)
  })))
  return { bytes, reads, layer }
}

/**
 * A WebAssembly custom section appended to a module changes its bytes (so its digest), not what
 * it computes: an "uploaded" copy of a built-in witness generator that the build dir cannot serve.
 */
const withCustomSection = (wasm: Uint8Array, note: string) => {
  const name = new TextEncoder().encode(note)
  const body = [name.length, ...name, 0x6d, 0x7a, 0x6b]
  return new Uint8Array([...wasm, 0x00, body.length, ...body])
}

const dirs: Array<string> = []
const freshDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "mzk-artifacts-test-"))
  dirs.push(dir)
  return dir
}

// The part of snarkjs's setup API this test uses (src/snarkjs.d.ts declares only what the prover uses).
const { zKey } = snarkjs as unknown as {
  zKey: {
    contribute(from: Uint8Array, to: { type: "mem"; data?: Uint8Array }, name: string, entropy: string): Promise<unknown>
    exportVerificationKey(zkey: Uint8Array): Promise<unknown>
  }
}

/** The upload: the multiplier with a fresh phase-2 contribution (so its own keys) and a distinct wasm. */
let upload: { wasm: Uint8Array; zkey: Uint8Array; vkey: unknown }

beforeAll(async () => {
  const contributed = { type: "mem" } as { type: "mem"; data?: Uint8Array }
  await zKey.contribute(new Uint8Array(readFileSync(buildFilesOf("multiplier").zkey)), contributed, "test", "artifacts test entropy")
  upload = {
    wasm: withCustomSection(new Uint8Array(readFileSync(buildFilesOf("multiplier").wasm)), "upload"),
    zkey: contributed.data!,
    vkey: await zKey.exportVerificationKey(contributed.data!)
  }
}, 60_000)

afterAll(async () => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  await (globalThis as { curve_bn128?: { terminate(): Promise<void> } | null }).curve_bn128?.terminate()
})

/** The account's circuit record as the core would hand it to the prover, its artifacts put in `store`. */
const uploaded = (store: ReturnType<typeof memoryArtifacts>, name = "my_multiplier"): Circuit => {
  const wasm = sha256(upload.wasm)
  const zkey = sha256(upload.zkey)
  store.bytes.set(wasm, upload.wasm)
  store.bytes.set(zkey, upload.zkey)
  return {
    ...builtin("multiplier"),
    id: "cir_test1" as Circuit["id"],
    name,
    owner: "acc_test" as AccountId,
    description: null,
    verification_key: upload.vkey,
    development_only: false,
    artifacts: { wasm, zkey, r1cs: null, sym: null }
  }
}

describe("ArtifactFiles", () => {
  it.scoped("a built-in digest is its build file; nothing is read from the store", () =>
    Effect.gen(function*() {
      const store = memoryArtifacts()
      const files = yield* makeArtifactFiles({ cacheDir: freshDir() }).pipe(Effect.provide(store.layer))
      const multiplier = builtin("multiplier")
      expect(yield* files.path(multiplier.artifacts!.zkey)).toBe(buildFilesOf("multiplier").zkey)
      expect(store.reads.size).toBe(0)
    }))

  it.scoped("an uploaded digest is fetched once into the empty cache (concurrent requests share the fetch), atomically, byte for byte", () =>
    Effect.gen(function*() {
      const store = memoryArtifacts()
      const dir = freshDir()
      const circuit = uploaded(store)
      const files = yield* makeArtifactFiles({ cacheDir: join(dir, "not-yet-made") }).pipe(Effect.provide(store.layer))
      const digest = circuit.artifacts!.zkey
      const paths = yield* Effect.all(Array.from({ length: 8 }, () => files.path(digest)), { concurrency: "unbounded" })
      expect(new Set(paths)).toEqual(new Set([join(dir, "not-yet-made", digest)]))
      expect(new Uint8Array(readFileSync(paths[0]!))).toEqual(upload.zkey)
      expect(store.reads.get(digest)).toBe(1)
      expect(yield* files.path(digest)).toBe(paths[0])
      expect(store.reads.get(digest)).toBe(1)
      expect(yield* files.stats).toEqual({ fetched: 1, corrupt: 0 })
      // Only the digest's file: no temporary file is left behind.
      expect(readdirSync(join(dir, "not-yet-made"))).toEqual([digest])
    }))

  it.scoped("a cached file that does not match its digest is fetched again", () =>
    Effect.gen(function*() {
      const store = memoryArtifacts()
      const dir = freshDir()
      const digest = uploaded(store).artifacts!.zkey
      writeFileSync(join(dir, digest), upload.zkey.subarray(0, 100))
      const files = yield* makeArtifactFiles({ cacheDir: dir }).pipe(Effect.provide(store.layer))
      const path = yield* files.path(digest)
      expect(sha256(new Uint8Array(readFileSync(path)))).toBe(digest)
      expect(yield* files.stats).toEqual({ fetched: 1, corrupt: 1 })
      // A good cached file (another process put it there) is used as it is.
      const again = yield* makeArtifactFiles({ cacheDir: dir }).pipe(Effect.provide(store.layer))
      expect(yield* again.path(digest)).toBe(path)
      expect(yield* again.stats).toEqual({ fetched: 0, corrupt: 0 })
    }))

  it.scoped("a digest missing from the store, bytes that do not match their digest, and non-digests fail as internal", () =>
    Effect.gen(function*() {
      const store = memoryArtifacts()
      const files = yield* makeArtifactFiles({ cacheDir: freshDir() }).pipe(Effect.provide(store.layer))
      const missing = sha256(new Uint8Array([1, 2, 3]))
      const error = yield* Effect.flip(files.path(missing))
      expect(error).toBeInstanceOf(ProverFailure)
      expect(error).toMatchObject({ code: "internal", message: `Artifact ${missing} is not in the artifact store (the circuit's files are missing from the database)` })
      const liar = sha256(new Uint8Array([4]))
      store.bytes.set(liar, new Uint8Array([5]))
      expect((yield* Effect.flip(files.path(liar))).message).toContain("do not match that digest")
      expect((yield* Effect.flip(files.path("../../etc/passwd" as Digest))).message).toContain("Not an artifact digest")
      // A failed fetch is not remembered: once the bytes are there, it works.
      store.bytes.set(missing, new Uint8Array([1, 2, 3]))
      expect(new Uint8Array(readFileSync(yield* files.path(missing)))).toEqual(new Uint8Array([1, 2, 3]))
    }))
})

// --- The pool over uploaded circuits, on each engine --------------------------------------------

const native = loadNativeProver()
const ENGINES: ReadonlyArray<ProverEngine> = native.ok ? ["snarkjs", "native"] : ["snarkjs"]

const withPool = <A, E>(
  store: ReturnType<typeof memoryArtifacts>,
  options: ProverPoolOptions & { readonly cacheDir: string },
  use: (prover: ProverPool, files: ArtifactFiles["Type"]) => Effect.Effect<A, E>
) =>
  Effect.gen(function*() {
    const files = yield* ArtifactFiles
    const prover = yield* makeProverPool(options)
    return yield* use(prover, files)
  }).pipe(Effect.provide(ArtifactFilesLive({ cacheDir: options.cacheDir })), Effect.provide(store.layer), Effect.scoped)

/** Proves and checks the proof: with the pool, with snarkjs and the circuit's key, and that a changed signal fails. */
const proveVerified = (prover: ProverPool, circuit: Circuit, a: bigint, b: bigint) =>
  Effect.gen(function*() {
    const out = yield* prover.prove(circuit, { a: a.toString(), b: b.toString() })
    const c = ((a * b) % FIELD_MODULUS).toString()
    expect(out.public_signals).toEqual([c])
    expect(yield* prover.verify(circuit, out.proof, out.public_signals)).toBe(true)
    expect(yield* prover.verify(circuit, out.proof, [((a * b + 1n) % FIELD_MODULUS).toString()])).toBe(false)
    expect(yield* Effect.promise(() => snarkjs.groth16.verify(circuit.verification_key, out.public_signals, out.proof))).toBe(true)
    return out
  })

for (const engine of ENGINES) {
  describe(`the pool on ${engine} with uploaded circuits`, () => {
    it.live("proves a circuit whose artifacts are only in the store, starting from an empty cache; its proofs are its own", () =>
      Effect.gen(function*() {
        const store = memoryArtifacts()
        const dir = freshDir()
        const circuit = uploaded(store)
        yield* withPool(store, { engine, poolSize: 2, preload: [], cacheDir: dir }, (prover) =>
          Effect.gen(function*() {
            // The pool started with nothing of the circuit on this host.
            expect(readdirSync(dir)).toEqual([])
              const outs = yield* Effect.all([
                proveVerified(prover, circuit, 3n, 11n),
                proveVerified(prover, circuit, 5n, 7n),
                proveVerified(prover, builtin("multiplier"), 6n, 7n)
              ], { concurrency: "unbounded" })
              // Made with the upload's own key: the built-in key (same circuit, other setup) rejects it.
              const builtinKey = builtin("multiplier").verification_key
              expect(yield* Effect.promise(() => snarkjs.groth16.verify(builtinKey, outs[0].public_signals, outs[0].proof))).toBe(false)
              // The artifacts, and (native) the key's tables in their own folder.
              expect(readdirSync(dir).filter((name) => name !== TABLES).sort()).toEqual([circuit.artifacts!.wasm, circuit.artifacts!.zkey].sort())
              // Two threads, one fetch per artifact.
              expect(store.reads.get(circuit.artifacts!.zkey)).toBe(1)
              expect(store.reads.get(circuit.artifacts!.wasm)).toBe(1)
            }))
      }), 60_000)

    it.live("keeps circuits under the memory budget, least recently used out first: A, B, A with room for one", () =>
      Effect.gen(function*() {
        const store = memoryArtifacts()
        const a = uploaded(store)
        const b = builtin("multiplier")
        // Native keys live in the process, shared by its threads: an evicted one is freed at once.
        const nativeKeys = () => (native.ok ? native.addon.memoryStats().zkeys : 0)
        yield* withPool(store, { engine, poolSize: 1, preload: [], memoryBudgetBytes: 1, cacheDir: freshDir() }, (prover) =>
          Effect.gen(function*() {
            const before = nativeKeys()
            yield* proveVerified(prover, a, 3n, 11n)
            yield* proveVerified(prover, b, 3n, 11n)
            yield* proveVerified(prover, a, 13n, 17n)
            expect(yield* prover.stats).toMatchObject({ loads: 3, hits: 0, evictions: 2, entries: 1 })
            if (engine === "native") expect(nativeKeys() - before).toBe(1)
          }))
        // With room for both, the second proof of A finds it loaded.
        yield* withPool(store, { engine, poolSize: 1, preload: [], memoryBudgetBytes: 2 ** 30, cacheDir: freshDir() }, (prover) =>
          Effect.gen(function*() {
            yield* proveVerified(prover, a, 3n, 11n)
            yield* proveVerified(prover, b, 3n, 11n)
            yield* proveVerified(prover, a, 13n, 17n)
            const stats = yield* prover.stats
            expect(stats).toMatchObject({ loads: 2, hits: 1, evictions: 0, entries: 2 })
            if (engine === "native") expect(nativeKeys()).toBeGreaterThanOrEqual(2)
            expect(stats.bytes).toBeGreaterThan(upload.zkey.length + upload.wasm.length)
          }))
      }), 60_000)

    it.live("a cached file corrupted while the pool runs is caught by the thread that loads it, fetched again, and the proof succeeds", () =>
      Effect.gen(function*() {
        const store = memoryArtifacts()
        const dir = freshDir()
        const a = uploaded(store)
        yield* withPool(store, { engine, poolSize: 1, preload: [], memoryBudgetBytes: 1, cacheDir: dir }, (prover, files) =>
          Effect.gen(function*() {
            yield* proveVerified(prover, a, 3n, 11n)
            // Evicts A from the thread, then damages its cached zkey behind the cache's back.
            yield* proveVerified(prover, builtin("multiplier"), 3n, 11n)
            writeFileSync(join(dir, a.artifacts!.zkey), upload.zkey.subarray(0, 2000))
            yield* proveVerified(prover, a, 13n, 17n)
            expect(yield* files.stats).toEqual({ fetched: 3, corrupt: 1 })
            expect(store.reads.get(a.artifacts!.zkey)).toBe(2)
            expect(sha256(new Uint8Array(readFileSync(join(dir, a.artifacts!.zkey))))).toBe(a.artifacts!.zkey)
          }))
      }), 60_000)

    it.live("a circuit whose artifacts are missing from the store fails as internal, naming the digest; the pool goes on", () =>
      Effect.gen(function*() {
        const store = memoryArtifacts()
        const a = uploaded(store)
        store.bytes.delete(a.artifacts!.zkey)
        yield* withPool(store, { engine, poolSize: 1, preload: [], cacheDir: freshDir() }, (prover) =>
          Effect.gen(function*() {
            const error = yield* Effect.flip(prover.prove(a, { a: "3", b: "11" }))
            expect(error).toMatchObject({ _tag: "ProverFailure", code: "internal" })
            expect(error.message).toContain(`Artifact ${a.artifacts!.zkey} is not in the artifact store`)
            // Verification needs no artifacts: the record's key is enough.
            const out = yield* proveVerified(prover, builtin("multiplier"), 3n, 11n)
            expect(yield* prover.verify(a, out.proof, out.public_signals)).toBe(false)
          }))
      }), 60_000)
  })
}

describe("the prover's memory setting", () => {
  it("parses bytes with an optional unit", () => {
    expect(["1073741824", "512MiB", "2 GiB", "500MB", "64kib", "1.5GiB", "-1", "lots", ""].map((t) => Option.getOrNull(parseBytes(t)))).toEqual([
      2 ** 30, 512 * 2 ** 20, 2 * 2 ** 30, 500e6, 64 * 1024, null, null, null, null
    ])
  })

  it.live("MZK_PROVER_MEMORY sets the budget (bytes or with a unit); a bad value stops the start", () =>
    Effect.gen(function*() {
      const start = (value: string) =>
        makeProverPool({ engine: "snarkjs", poolSize: 1, preload: [] }).pipe(
          Effect.flatMap((prover) => prover.stats),
          Effect.provide(ArtifactFilesLive({ cacheDir: freshDir() })),
          Effect.provide(memoryArtifacts().layer),
          Effect.scoped,
          Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["MZK_PROVER_MEMORY", value]]))),
          Effect.exit
        )
      expect(Exit.isSuccess(yield* start("512MiB"))).toBe(true)
      const bad = yield* start("lots")
      expect(Exit.isFailure(bad)).toBe(true)
      expect(JSON.stringify(bad)).toMatch(/MZK_PROVER_MEMORY: .*Expected bytes/)
    }), 30_000)
})
