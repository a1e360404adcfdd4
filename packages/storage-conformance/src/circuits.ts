import { expect } from "@effect/vitest"
import {
  type AccountId,
  ArtifactsRepo,
  BN128_FIELD_MODULUS,
  type CircuitBuild,
  CircuitsRepo,
  type Digest,
  makeId,
  type ProofRecord,
  ProofsRepo,
  type StoredCircuit,
  type Timestamp,
  Transactor
} from "@mzk/core"
import { Chunk, Clock, Effect, Either, Exit, Option, Scope, Stream, TestClock } from "effect"
import { createHash } from "node:crypto"
import type { ConformanceIt } from "./env.js"
import { freshAccount } from "./fixtures.js"

const at = (iso: string) => iso as Timestamp
const FOREVER = at("9999-12-31T23:59:59.999Z")
const T0 = at("2030-01-01T00:00:00.000Z")
const T30 = at("2030-01-01T00:00:30.000Z")
const T60 = at("2030-01-01T00:01:00.000Z")
const T90 = at("2030-01-01T00:01:30.000Z")
const ROOMY = { maxCircuits: 1000, maxCompiling: 1000 }

const bytesOf = (text: string) => new TextEncoder().encode(text)

/** Bytes no other test stores, so a test's artifacts are its own to delete. */
const uniqueBytes = (label: string) => Effect.map(makeId("circuit"), (id) => bytesOf(`${label}:${id}`))

/** `n` bytes of a pattern that a chunk boundary cannot hide: every byte depends on its position. */
const patterned = (n: number, seed: number) => {
  const bytes = new Uint8Array(n)
  for (let i = 0; i < n; i++) bytes[i] = (i * 31 + seed + (i >> 20)) & 0xff
  return bytes
}

/** `bytes` as a stream of pieces of `size` (the last shorter), as a transport would deliver them. */
const pieces = (bytes: Uint8Array, size: number) =>
  Stream.fromIterable(Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.subarray(i * size, (i + 1) * size)))

const concat = (chunks: ReadonlyArray<Uint8Array>) => {
  const all = new Uint8Array(chunks.reduce((n, chunk) => n + chunk.length, 0))
  let offset = 0
  for (const chunk of chunks) {
    all.set(chunk, offset)
    offset += chunk.length
  }
  return all
}

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex") as Digest

/** Byte equality without the test runner's element-by-element deep equality (slow on megabytes). */
const sameBytes = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((byte, i) => byte === b[i])

/** A compiling circuit uploaded as prebuilt artifacts, whose files are stored for real. */
const circuitRecord = (owner: AccountId, overrides: Partial<StoredCircuit> = {}) =>
  Effect.gen(function*() {
    const artifacts = yield* ArtifactsRepo
    const id = yield* makeId("circuit")
    const record: StoredCircuit = {
      id,
      name: `circuit-${id.slice(-8)}`,
      version: 1,
      owner,
      status: "compiling",
      error: null,
      description: "A circuit of the conformance suite",
      constraints: null,
      inputs: [],
      public_signals: [],
      verification_key: null,
      proving_system: "groth16",
      proving_systems: ["groth16"],
      development_only: false,
      field_modulus: BN128_FIELD_MODULUS,
      artifacts: null,
      created_at: T0,
      updated_at: T0,
      source: {
        kind: "artifacts",
        wasm: yield* artifacts.put(yield* uniqueBytes("wasm")),
        zkey: yield* artifacts.put(yield* uniqueBytes("zkey")),
        sym: yield* artifacts.put(yield* uniqueBytes("sym")),
        r1cs: null
      },
      lease_expires_at: null,
      attempts: 0,
      metadata: {},
      ...overrides
    }
    return record
  })

export const inserted = (owner: AccountId, overrides: Partial<StoredCircuit> = {}) =>
  Effect.gen(function*() {
    const record = yield* circuitRecord(owner, overrides)
    const result = yield* (yield* CircuitsRepo).insert(record, ROOMY)
    expect(Either.map(result, (r) => r.replaced)).toEqual(Either.right(null))
    return { ...record, version: Either.getOrThrow(result).version }
  })

const buildOf = (wasm: Digest, zkey: Digest): CircuitBuild => ({
  artifacts: { wasm, zkey, r1cs: null, sym: null },
  constraints: 7,
  inputs: [
    { name: "a", visibility: "private", kind: "field", dimensions: [] },
    { name: "x", visibility: "public", kind: "field", dimensions: [2, 1] }
  ],
  public_signals: ["out", "x[0][0]", "x[1][0]"],
  verification_key: { protocol: "groth16", curve: "bn128", nPublic: 3, IC: [["1", "2", "1"]] },
  proving_system: "groth16",
  development_only: true,
  updated_at: T30
})

const claimBuilds = (now: Timestamp, limit: number, leaseUntil = T60) =>
  Effect.flatMap(CircuitsRepo, (repo) => repo.claimBuilds({ now, leaseUntil, limit }))

/**
 * The store is shared by every conformance test and `claimBuilds` works across accounts, so each
 * claim test first takes every earlier test's claimable builds out of the way (leased until the
 * year 9999, so they never come back).
 */
const isolate = Effect.gen(function*() {
  while ((yield* claimBuilds(T90, 1000, FOREVER)).length > 0) { /* drain */ }
})

const proofOf = (account: AccountId, circuit: StoredCircuit, status: ProofRecord["status"]) =>
  Effect.gen(function*() {
    const proof: ProofRecord = {
      id: yield* makeId("proof"),
      account_id: account,
      batch_id: null,
      type: circuit.name,
      circuit: circuit.name,
      circuit_id: circuit.id,
      circuit_version: circuit.version,
      proving_system: "groth16",
      status,
      inputs: status === "queued" || status === "running" ? { a: "1" } : null,
      public_inputs: {},
      proof_blob: null,
      error: null,
      duration_ms: null,
      proving_ms: null,
      priority: "normal",
      deadline_at: null,
      attempts: 0,
      lease_expires_at: null,
      created_at: T0,
      started_at: null,
      completed_at: null,
      finished_at: null,
      canceled_at: null,
      expires_at: null,
      metadata: {}
    }
    yield* (yield* ProofsRepo).insertMany([proof])
    return proof
  })

const count = <A, E>(results: ReadonlyArray<Either.Either<A, E>>) => {
  const tally: Record<string, number> = {}
  for (const result of results) {
    const label = Either.isRight(result) ? "ok" : String(result.left)
    tally[label] = (tally[label] ?? 0) + 1
  }
  return tally
}

export const circuitTests = (it: ConformanceIt, timeout: number) => {
  it.effect("artifacts: put returns the SHA-256 and get gives the bytes back; unknown digests are none", () =>
    Effect.gen(function*() {
      const artifacts = yield* ArtifactsRepo
      const digest = yield* artifacts.put(bytesOf("hello"))
      expect(digest).toBe("2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824")
      expect(yield* artifacts.get(digest)).toEqual(Option.some(bytesOf("hello")))
      expect(yield* artifacts.size(digest)).toEqual(Option.some(5))
      const empty = yield* artifacts.put(new Uint8Array(0))
      expect(empty).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
      expect(yield* artifacts.get(empty)).toEqual(Option.some(new Uint8Array(0)))
      const unknown = "0".repeat(64) as Digest
      expect(yield* artifacts.get(unknown)).toEqual(Option.none())
      expect(yield* artifacts.size(unknown)).toEqual(Option.none())
    }), timeout)

  it.effect("artifacts: more than 1 MiB round-trips exactly across chunks; putting the same bytes again stores them once", () =>
    Effect.gen(function*() {
      const artifacts = yield* ArtifactsRepo
      const big = patterned(2 * 1024 * 1024 + 12_345, 7)
      const [first, second] = yield* Effect.all([artifacts.put(big), artifacts.put(Uint8Array.from(big))], { concurrency: 2 })
      expect(second).toBe(first)
      expect(yield* artifacts.put(big)).toBe(first)
      const back = yield* artifacts.get(first)
      expect(Option.map(back, (bytes) => bytes.length)).toEqual(Option.some(big.length))
      expect(Option.map(back, (bytes) => sameBytes(bytes, big))).toEqual(Option.some(true))
      expect(yield* artifacts.size(first)).toEqual(Option.some(big.length))
      // Exactly one chunk boundary's worth.
      const exact = patterned(1024 * 1024, 3)
      expect(Option.map(yield* artifacts.get(yield* artifacts.put(exact)), (bytes) => sameBytes(bytes, exact))).toEqual(Option.some(true))
    }), timeout)

  it.effect("artifacts: a put inside a rolled-back transaction leaves nothing", () =>
    Effect.gen(function*() {
      const artifacts = yield* ArtifactsRepo
      const bytes = yield* uniqueBytes("rolled back")
      const failed = yield* Effect.flip((yield* Transactor).transaction(Effect.zipRight(artifacts.put(bytes), Effect.fail("boom" as const))))
      expect(failed).toBe("boom")
      const digest = yield* artifacts.put(bytes)
      yield* Effect.flip((yield* Transactor).transaction(Effect.zipRight(artifacts.put(bytes), Effect.fail("boom" as const))))
      expect(yield* artifacts.get(digest)).toEqual(Option.some(bytes))
    }), timeout)

  it.effect("artifacts: a streamed write re-cuts any pieces into chunks of at most 1 MiB and reads back exactly (0 bytes to many chunks)", () =>
    Effect.gen(function*() {
      const artifacts = yield* ArtifactsRepo
      const MiB = 1024 * 1024
      for (const [n, piece] of [[0, 1], [1, 1], [MiB - 1, 65_536], [MiB, MiB], [MiB + 1, 333_333], [3 * MiB + 12_345, 1_048_577]] as const) {
        const bytes = patterned(n, n & 0xff)
        const written = yield* artifacts.write(pieces(bytes, piece))
        expect(written.digest).toBe(sha256(bytes))
        expect(written.size).toBe(n)
        expect(yield* artifacts.size(written.digest)).toEqual(Option.some(n))
        const reader = yield* artifacts.read(written.digest)
        expect(Option.map(reader, (r) => r.size)).toEqual(Option.some(n))
        const chunks = Option.isSome(reader) ? Chunk.toReadonlyArray(yield* Stream.runCollect(reader.value.chunks)) : []
        expect(chunks.every((chunk) => chunk.length <= MiB)).toBe(true)
        expect(chunks.length).toBe(Math.ceil(n / MiB))
        expect(sameBytes(concat(chunks), bytes)).toBe(true)
        expect(Option.map(yield* artifacts.get(written.digest), (got) => sameBytes(got, bytes))).toEqual(Option.some(true))
      }
    }), timeout)

  it.effect("artifacts: a range from any offset (in a chunk, on a boundary, the last byte, past the end) is exactly those bytes of the whole", () =>
    Effect.gen(function*() {
      const artifacts = yield* ArtifactsRepo
      const MiB = 1024 * 1024
      const bytes = patterned(3 * MiB + 12_345, 91)
      const written = yield* artifacts.write(pieces(bytes, 500_000))
      const found = yield* artifacts.read(written.digest)
      if (Option.isNone(found)) return expect.fail("the written artifact is readable")
      const reader = found.value
      const whole = concat(Chunk.toReadonlyArray(yield* Stream.runCollect(reader.chunks)))
      expect(sameBytes(whole, bytes)).toBe(true)
      const n = bytes.length
      const starts = [0, 1, 12_345, MiB - 1, MiB, MiB + 1, 2 * MiB + 777, 3 * MiB, n - 1, n, n + 1, n + MiB]
      const ranges: Array<readonly [number, number | undefined]> = [
        ...starts.map((start) => [start, undefined] as const),
        // A range with an end: inside one chunk, across a boundary, ending on one, past the last byte, empty.
        [100, 200], [MiB - 10, MiB + 10], [MiB, 2 * MiB], [5, 3 * MiB], [2 * MiB + 1, n + 100], [MiB + 3, MiB + 3], [200, 100]
      ]
      for (const [start, end] of ranges) {
        const got = Chunk.toReadonlyArray(yield* Stream.runCollect(reader.range(start, end)))
        const expected = whole.subarray(start, end)
        expect(sameBytes(concat(got), expected), `bytes ${start} to ${end ?? "the end"}`).toBe(true)
        // Read chunk by chunk: no piece holds more than a stored chunk.
        expect(got.every((piece) => piece.length <= MiB), `pieces of ${start} to ${end ?? "the end"}`).toBe(true)
      }
      // The empty artifact has no byte to start from.
      const empty = yield* artifacts.read(yield* artifacts.put(new Uint8Array(0)))
      expect(Option.map(empty, (r) => r.size)).toEqual(Option.some(0))
      if (Option.isSome(empty)) expect(concat(Chunk.toReadonlyArray(yield* Stream.runCollect(empty.value.range(0)))).length).toBe(0)
    }), timeout)

  it.effect("artifacts: the same bytes streamed twice, at once and again, are one artifact", () =>
    Effect.gen(function*() {
      const artifacts = yield* ArtifactsRepo
      const bytes = concat([yield* uniqueBytes("streamed twice"), patterned(2 * 1024 * 1024 + 7, 11)])
      const [a, b] = yield* Effect.all([artifacts.write(pieces(bytes, 100_000)), artifacts.write(pieces(bytes, 777_777))], { concurrency: 2 })
      expect(b.digest).toBe(a.digest)
      expect((yield* artifacts.write(pieces(bytes, bytes.length))).digest).toBe(a.digest)
      expect(yield* artifacts.put(bytes)).toBe(a.digest)
      expect(Option.map(yield* artifacts.get(a.digest), (got) => sameBytes(got, bytes))).toEqual(Option.some(true))
    }), timeout)

  it.effect("artifacts: staged bytes stay invisible until published; an aborted stream or an ended stage leaves nothing", () =>
    Effect.gen(function*() {
      const artifacts = yield* ArtifactsRepo
      const bytes = concat([yield* uniqueBytes("staged"), patterned(1024 * 1024 + 99, 5)])
      const digest = sha256(bytes)
      // A stream that fails after more than a chunk has been written.
      const aborted = pieces(bytes, 300_000).pipe(Stream.take(4), Stream.concat(Stream.fail("client went away" as const)))
      expect(yield* Effect.flip(artifacts.write(aborted))).toBe("client went away")
      expect(yield* artifacts.size(digest)).toEqual(Option.none())
      // Staged, and read by no one until published.
      const published = yield* Effect.scoped(Effect.gen(function*() {
        const staged = yield* artifacts.stage(pieces(bytes, 65_536))
        expect(staged.digest).toBe(digest)
        expect(yield* artifacts.size(digest)).toEqual(Option.none())
        return yield* artifacts.publish(staged)
      }))
      expect(published).toBe(digest)
      expect(Option.map(yield* artifacts.get(digest), (got) => sameBytes(got, bytes))).toEqual(Option.some(true))
      // A stage whose scope ended without publishing has nothing left to publish.
      const other = concat([yield* uniqueBytes("never published"), patterned(1024 * 1024 + 1, 9)])
      const ended = yield* Effect.scoped(artifacts.stage(pieces(other, 500_000)))
      expect(yield* Effect.either(artifacts.publish(ended))).toMatchObject({ _tag: "Left", left: { _tag: "StorageError" } })
      expect(yield* artifacts.size(ended.digest)).toEqual(Option.none())
      // Published in a transaction that rolls back: nothing, and the bytes can be stored again.
      yield* Effect.flip((yield* Transactor).transaction(Effect.scoped(Effect.gen(function*() {
        yield* artifacts.publish(yield* artifacts.stage(pieces(other, 500_000)))
        return yield* Effect.fail("boom" as const)
      }))))
      expect(yield* artifacts.size(ended.digest)).toEqual(Option.none())
      expect((yield* artifacts.write(pieces(other, 500_000))).size).toBe(other.length)
    }), timeout)

  it.effect("artifacts: a staging area a dead process left is deleted once old; newer ones and published artifacts stay", () =>
    Effect.gen(function*() {
      const artifacts = yield* ArtifactsRepo
      const old = concat([yield* uniqueBytes("abandoned"), patterned(1024 * 1024 + 3, 7)])
      const young = concat([yield* uniqueBytes("still uploading"), patterned(200_000, 3)])
      const kept = concat([yield* uniqueBytes("published"), patterned(1024 * 1024 + 5, 1)])
      const keptDigest = yield* artifacts.put(kept)
      // Scopes that are never closed, as in a process killed mid-upload: no finalizer drops them.
      const dead = yield* Scope.make()
      const abandoned = yield* Scope.extend(artifacts.stage(pieces(old, 400_000)), dead)
      yield* TestClock.adjust("2 hours")
      const live = yield* Scope.make()
      const uploading = yield* Scope.extend(artifacts.stage(pieces(young, 64_000)), live)
      const cutoff = at(new Date((yield* Clock.currentTimeMillis) - 3_600_000).toISOString())

      expect(yield* artifacts.dropAbandoned(cutoff)).toBe(abandoned.chunks)
      expect(yield* Effect.either(artifacts.publish(abandoned))).toMatchObject({ _tag: "Left", left: { _tag: "StorageError" } })
      expect(yield* artifacts.dropAbandoned(cutoff)).toBe(0)
      expect(yield* artifacts.publish(uploading)).toBe(uploading.digest)
      expect(Option.map(yield* artifacts.get(uploading.digest), (got) => sameBytes(got, young))).toEqual(Option.some(true))
      expect(Option.map(yield* artifacts.get(keptDigest), (got) => sameBytes(got, kept))).toEqual(Option.some(true))
      yield* Scope.close(live, Exit.void)
      yield* Scope.close(dead, Exit.void)
    }), timeout)

  it.effect("circuits: insert, then getByName, getById and list within the owning account only", () =>
    Effect.gen(function*() {
      const repo = yield* CircuitsRepo
      const account = yield* freshAccount
      const other = yield* freshAccount
      const first = yield* inserted(account, { description: null })
      const second = yield* inserted(account, { source: { kind: "circom", main: "main.circom", files: { "main.circom": first.source.kind === "artifacts" ? first.source.sym : ("" as Digest) } } })
      yield* inserted(other)
      expect(yield* repo.getByName(account, first.name)).toEqual(Option.some(first))
      expect(yield* repo.getById(second.id)).toEqual(Option.some(second))
      expect(yield* repo.getByName(other, first.name)).toEqual(Option.none())
      const listed = yield* repo.list(account, { limit: 1 })
      expect([listed.items, listed.total, listed.has_more]).toEqual([[second], 2, true])
      const rest = yield* repo.list(account, { limit: 10, startingAfter: second.id })
      expect([rest.items, rest.has_more]).toEqual([[first], false])
      const back = yield* repo.list(account, { limit: 10, endingBefore: first.id })
      expect([back.items, back.has_more]).toEqual([[second], false])
    }), timeout)

  it.effect("circuits: insert refuses at the circuit limit, then the compiling limit", () =>
    Effect.gen(function*() {
      const repo = yield* CircuitsRepo
      const account = yield* freshAccount
      const a = yield* inserted(account)
      expect(yield* repo.insert(yield* circuitRecord(account), { maxCircuits: 1, maxCompiling: 10 })).toEqual(Either.left("circuit_limit"))
      // Every live version counts: a new version of the same name too.
      expect(yield* repo.insert(yield* circuitRecord(account, { name: a.name }), { maxCircuits: 1, maxCompiling: 10 }))
        .toEqual(Either.left("circuit_limit"))
      expect(yield* repo.insert(yield* circuitRecord(account), { maxCircuits: 10, maxCompiling: 1 })).toEqual(Either.left("compilation_limit"))
      // Settled circuits do not count as compiling.
      const [claimed] = (yield* claimBuilds(T0, 1000, FOREVER)).filter((c) => c.id === a.id)
      yield* repo.fail(a.id, claimed!.attempts, { code: "compile_error", message: "x" }, T30)
      expect(yield* repo.insert(yield* circuitRecord(account), { maxCircuits: 10, maxCompiling: 1 })).toEqual(Either.right({ version: 1, replaced: null }))
      expect((yield* repo.list(account, { limit: 10 })).total).toBe(2)
    }), timeout)

  it.effect("circuits: limits hold under concurrency (20 uploads, room for 5; 10 compiling, room for 2); one name, 8 at once: versions 1 to 8", () =>
    Effect.gen(function*() {
      const repo = yield* CircuitsRepo
      const tryAll = (records: ReadonlyArray<StoredCircuit>, limits: { maxCircuits: number; maxCompiling: number }) =>
        Effect.all(records.map((r) => repo.insert(r, limits)), { concurrency: "unbounded" })

      const many = yield* freshAccount
      const twenty = yield* Effect.all(Array.from({ length: 20 }, () => circuitRecord(many)))
      expect(count(yield* tryAll(twenty, { maxCircuits: 5, maxCompiling: 100 }))).toEqual({ ok: 5, circuit_limit: 15 })
      expect((yield* repo.list(many, { limit: 100 })).total).toBe(5)

      const compiling = yield* freshAccount
      const ten = yield* Effect.all(Array.from({ length: 10 }, () => circuitRecord(compiling)))
      expect(count(yield* tryAll(ten, { maxCircuits: 100, maxCompiling: 2 }))).toEqual({ ok: 2, compilation_limit: 8 })

      const named = yield* freshAccount
      const eight = yield* Effect.all(Array.from({ length: 8 }, () => circuitRecord(named, { name: "same" })))
      const results = yield* tryAll(eight, ROOMY)
      expect(count(results)).toEqual({ ok: 8 })
      expect(results.map((r) => Either.getOrThrow(r).version).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8])
      // The list shows the name once, at its newest version; every version is live.
      expect((yield* repo.list(named, { limit: 100 })).items.map((c) => [c.name, c.version])).toEqual([["same", 8]])
      expect((yield* repo.listVersions(named, "same", { limit: 100 })).items.map((c) => c.version)).toEqual([8, 7, 6, 5, 4, 3, 2, 1])
    }), timeout)

  it.effect("circuits: a removed circuit stays readable by id and leaves listings; its name's next upload takes a new number", () =>
    Effect.gen(function*() {
      const repo = yield* CircuitsRepo
      const account = yield* freshAccount
      const old = yield* inserted(account, { name: "reused" })
      expect(yield* repo.remove(account, "reused", "all", T30)).toHaveProperty("removed")
      expect(yield* repo.getByName(account, "reused")).toEqual(Option.none())
      expect(Option.map(yield* repo.getById(old.id), (c) => c.id)).toEqual(Option.some(old.id))
      expect(yield* repo.remove(account, "reused", "all", T30)).toBe("not_found")
      // Removed circuits count against no limit.
      // A number is never given again: proofs of the removed version name it.
      const upload = yield* circuitRecord(account, { name: "reused" })
      expect(yield* repo.insert(upload, { maxCircuits: 1, maxCompiling: 1 })).toEqual(Either.right({ version: 2, replaced: null }))
      const fresh = { ...upload, version: 2 }
      expect(yield* repo.getByName(account, "reused")).toEqual(Option.some(fresh))
      expect(yield* repo.getByName(account, "reused", 1)).toEqual(Option.none())
      expect(Option.map(yield* repo.getById(old.id), (c) => c.version)).toEqual(Option.some(1))
      expect((yield* repo.list(account, { limit: 10 })).items).toEqual([fresh])
    }), timeout)

  it.effect("circuits: an upload takes a failed circuit's name: the failed one is removed (readable by id), its own artifacts deleted, shared ones kept", () =>
    Effect.gen(function*() {
      yield* isolate
      const repo = yield* CircuitsRepo
      const artifacts = yield* ArtifactsRepo
      const account = yield* freshAccount
      const failed = yield* inserted(account, { name: "retry" })
      if (failed.source.kind !== "artifacts") return expect.fail("an artifacts upload")
      const [claimed] = yield* claimBuilds(T0, 1)
      yield* repo.fail(failed.id, claimed!.attempts, { code: "compile_error", message: "x", file: "main.circom", line: 2 }, T30)
      // The corrected upload sends the same wasm and sym again and a new zkey; the failed circuit's own zkey goes with it.
      const corrected = yield* circuitRecord(account, {
        name: "retry",
        created_at: T60,
        updated_at: T60,
        source: { ...failed.source, zkey: yield* artifacts.put(yield* uniqueBytes("corrected zkey")) }
      })
      // The failed circuit gives its place too: one circuit may replace it where the account may hold one.
      // It still takes the next number: version 1 stays the failed one's, which its audit names.
      expect(yield* repo.insert(corrected, { maxCircuits: 1, maxCompiling: 1 })).toEqual(Either.right({ version: 2, replaced: failed.id }))
      expect(yield* repo.getByName(account, "retry")).toEqual(Option.some({ ...corrected, version: 2 }))
      expect((yield* repo.list(account, { limit: 10 })).items).toEqual([{ ...corrected, version: 2 }])
      expect(Option.map(yield* repo.getById(failed.id), (c) => [c.status, c.error?.line])).toEqual(Option.some(["failed", 2]))
      expect(Option.isSome(yield* artifacts.get(failed.source.wasm))).toBe(true)
      expect(Option.isSome(yield* artifacts.get(failed.source.sym))).toBe(true)
      expect(yield* artifacts.get(failed.source.zkey)).toEqual(Option.none())
      // The replacement builds like any upload; the replaced row is never claimed again.
      expect((yield* claimBuilds(T60, 5, T90)).map((c) => c.id)).toEqual([corrected.id])
      // Only a failed newest version is replaced: after a compiling one, an upload is one more version.
      const third = yield* circuitRecord(account, { name: "retry" })
      expect(yield* repo.insert(third, ROOMY)).toEqual(Either.right({ version: 3, replaced: null }))
      expect(yield* repo.remove(account, "retry", "all", T90)).toEqual({
        removed: [{ id: corrected.id, version: 2 }, { id: third.id, version: 3 }]
      })
      expect(Option.map(yield* repo.getById(failed.id), (c) => c.id)).toEqual(Option.some(failed.id))
    }), timeout)

  it.effect("circuits: concurrent uploads of a failed circuit's name: one replaces it, every one gets its own version", () =>
    Effect.gen(function*() {
      yield* isolate
      const repo = yield* CircuitsRepo
      const account = yield* freshAccount
      const failed = yield* inserted(account, { name: "contested" })
      const [claimed] = yield* claimBuilds(T0, 1)
      yield* repo.fail(failed.id, claimed!.attempts, { code: "compile_error", message: "x" }, T30)
      const eight = yield* Effect.all(Array.from({ length: 8 }, () => circuitRecord(account, { name: "contested", created_at: T60 })))
      const results = yield* Effect.all(eight.map((r) => repo.insert(r, ROOMY)), { concurrency: "unbounded" })
      expect(count(results)).toEqual({ ok: 8 })
      const rights = results.map((r) => Either.getOrThrow(r))
      expect(rights.filter((r) => r.replaced !== null).map((r) => r.replaced)).toEqual([failed.id])
      expect(rights.map((r) => r.version).sort((a, b) => a - b)).toEqual([2, 3, 4, 5, 6, 7, 8, 9])
      const live = (yield* repo.list(account, { limit: 100 })).items
      expect(live.map((c) => [c.name, c.status, c.version])).toEqual([["contested", "compiling", 9]])
      const versions = (yield* repo.listVersions(account, "contested", { limit: 100 })).items
      expect(versions.map((c) => c.version)).toEqual([9, 8, 7, 6, 5, 4, 3, 2])
    }), timeout)

  it.effect("circuits: versions: getByName picks the newest, the newest ready or one number; listVersions pages newest first both ways", () =>
    Effect.gen(function*() {
      const repo = yield* CircuitsRepo
      const account = yield* freshAccount
      const v1 = yield* inserted(account, { name: "evolving" })
      const v2 = yield* inserted(account, { name: "evolving" })
      const v3 = yield* inserted(account, { name: "evolving" })
      expect([v1.version, v2.version, v3.version]).toEqual([1, 2, 3])
      const other = yield* freshAccount
      expect((yield* inserted(other, { name: "evolving" })).version).toBe(1)
      expect(Option.map(yield* repo.getByName(account, "evolving"), (c) => c.id)).toEqual(Option.some(v3.id))
      expect(Option.map(yield* repo.getByName(account, "evolving", 2), (c) => c.id)).toEqual(Option.some(v2.id))
      expect(yield* repo.getByName(account, "evolving", 9)).toEqual(Option.none())
      expect(yield* repo.getByName(account, "evolving", "newest_ready")).toEqual(Option.none())
      // v1 becomes ready, v2 fails: the newest ready is v1 while v3 compiles.
      const claimed = (yield* repo.claimBuilds({ now: T0, leaseUntil: FOREVER, limit: 1000, only: [v1.id, v2.id] }))
      const attempt = (id: string) => claimed.find((c) => c.id === id)!.attempts
      yield* repo.complete(v1.id, attempt(v1.id), buildOf(v1.source.kind === "artifacts" ? v1.source.wasm : ("" as Digest), yield* (yield* ArtifactsRepo).put(yield* uniqueBytes("built zkey"))))
      yield* repo.fail(v2.id, attempt(v2.id), { code: "compile_error", message: "x" }, T30)
      expect(Option.map(yield* repo.getByName(account, "evolving", "newest_ready"), (c) => c.version)).toEqual(Option.some(1))
      expect(Option.map(yield* repo.getByName(account, "evolving"), (c) => c.version)).toEqual(Option.some(3))

      const first = yield* repo.listVersions(account, "evolving", { limit: 2 })
      expect([first.items.map((c) => c.version), first.total, first.has_more]).toEqual([[3, 2], 3, true])
      const next = yield* repo.listVersions(account, "evolving", { limit: 2, startingAfter: first.items[1]!.id })
      expect([next.items.map((c) => c.version), next.has_more]).toEqual([[1], false])
      const back = yield* repo.listVersions(account, "evolving", { limit: 1, endingBefore: next.items[0]!.id })
      expect([back.items.map((c) => c.version), back.has_more]).toEqual([[2], true])
      const top = yield* repo.listVersions(account, "evolving", { limit: 5, endingBefore: v1.id })
      expect([top.items.map((c) => c.version), top.has_more]).toEqual([[3, 2], false])
      // A cursor that is no version of the name (another account's circuit) finds nothing.
      const foreign = (yield* repo.getByName(other, "evolving")).pipe(Option.getOrThrow)
      expect((yield* repo.listVersions(account, "evolving", { limit: 5, startingAfter: foreign.id })).items).toEqual([])
      expect((yield* repo.listVersions(account, "no-such-name", { limit: 5 })).total).toBe(0)
    }), timeout)

  it.effect("circuits: remove one version or all of a name; a version in use is refused alone, and refuses removing all", () =>
    Effect.gen(function*() {
      const repo = yield* CircuitsRepo
      const proofs = yield* ProofsRepo
      const account = yield* freshAccount
      const v1 = yield* inserted(account, { name: "layered" })
      const v2 = yield* inserted(account, { name: "layered" })
      const v3 = yield* inserted(account, { name: "layered" })
      const queued = yield* proofOf(account, v2, "queued")
      expect(yield* repo.remove(account, "layered", 2, T30)).toBe("in_use")
      expect(yield* repo.remove(account, "layered", "all", T30)).toBe("in_use")
      expect((yield* repo.listVersions(account, "layered", { limit: 10 })).total).toBe(3)
      // Another version of the same name is not held by v2's proof.
      expect(yield* repo.remove(account, "layered", 3, T30)).toEqual({ removed: [{ id: v3.id, version: 3 }] })
      expect(yield* repo.remove(account, "layered", 3, T30)).toBe("not_found")
      expect(yield* repo.remove(account, "layered", 7, T30)).toBe("not_found")
      // The newest is now v2; the list shows it.
      expect((yield* repo.list(account, { limit: 10 })).items.map((c) => c.version)).toEqual([2])
      yield* proofs.cancel(account, { proof: queued.id }, { canceled_at: T30, expires_at: T90 })
      expect(yield* repo.remove(account, "layered", "all", T60)).toEqual({
        removed: [{ id: v1.id, version: 1 }, { id: v2.id, version: 2 }]
      })
      expect((yield* repo.list(account, { limit: 10 })).items).toEqual([])
      expect(yield* repo.remove(account, "layered", "all", T60)).toBe("not_found")
      // Removed versions keep their rows and numbers; the next upload is version 4.
      expect(Option.map(yield* repo.getById(v2.id), (c) => c.version)).toEqual(Option.some(2))
      expect((yield* inserted(account, { name: "layered" })).version).toBe(4)
    }), timeout)

  it.effect("circuits: holdLive names the circuits removed since, in the order asked, and holds the live ones without change", () =>
    Effect.gen(function*() {
      const repo = yield* CircuitsRepo
      const tx = yield* Transactor
      const account = yield* freshAccount
      const kept = yield* inserted(account, { name: "kept" })
      const gone = yield* inserted(account, { name: "gone" })
      expect(yield* repo.remove(account, "gone", "all", T30)).toEqual({ removed: [{ id: gone.id, version: 1 }] })
      expect(yield* repo.holdLive([gone.id, kept.id, gone.id])).toEqual([gone.id, gone.id])
      expect(yield* tx.transaction(repo.holdLive([kept.id]))).toEqual([])
      expect(yield* repo.holdLive([])).toEqual([])
      expect(Option.map(yield* repo.getByName(account, "kept"), (c) => c.id)).toEqual(Option.some(kept.id))
    }), timeout)

  it.effect("circuits: remove is refused while proofs of the circuit are queued or running, never for another account's", () =>
    Effect.gen(function*() {
      const repo = yield* CircuitsRepo
      const proofs = yield* ProofsRepo
      const account = yield* freshAccount
      const circuit = yield* inserted(account)
      expect(yield* repo.remove(yield* freshAccount, circuit.name, "all", T30)).toBe("not_found")
      expect(yield* repo.remove(account, "no-such-circuit", "all", T30)).toBe("not_found")
      yield* proofOf(account, circuit, "completed")
      const proof = yield* proofOf(account, circuit, "queued")
      expect(yield* repo.remove(account, circuit.name, "all", T30)).toBe("in_use")
      const [running] = (yield* proofs.claimNext({ now: T0, leaseUntil: FOREVER, maxRunningPerAccount: 1000, limit: 1000 }))
        .filter((p) => p.id === proof.id)
      expect(running?.status).toBe("running")
      expect(yield* repo.remove(account, circuit.name, "all", T30)).toBe("in_use")
      yield* proofs.complete(proof.id, running!.attempts, { proof_blob: "e30=", public_inputs: {}, duration_ms: 1, completed_at: T30, expires_at: T90 })
      expect(yield* repo.remove(account, circuit.name, "all", T30)).toEqual({ removed: [{ id: circuit.id, version: 1 }] })
    }), timeout)

  it.effect("circuits: remove deletes the artifacts no live circuit refers to, and keeps shared ones", () =>
    Effect.gen(function*() {
      const repo = yield* CircuitsRepo
      const artifacts = yield* ArtifactsRepo
      const account = yield* freshAccount
      const other = yield* freshAccount
      const removed = yield* inserted(account)
      if (removed.source.kind !== "artifacts") return expect.fail("an artifacts upload")
      // Another account's circuit shares the wasm.
      const sharing = yield* inserted(other, {
        source: {
          ...removed.source,
          zkey: yield* artifacts.put(yield* uniqueBytes("other zkey")),
          sym: yield* artifacts.put(yield* uniqueBytes("other sym"))
        }
      })
      expect(yield* repo.remove(account, removed.name, "all", T30)).toHaveProperty("removed")
      expect(Option.isSome(yield* artifacts.get(removed.source.wasm))).toBe(true)
      expect(yield* artifacts.get(removed.source.zkey)).toEqual(Option.none())
      expect(yield* artifacts.get(removed.source.sym)).toEqual(Option.none())
      // The same bytes can be stored again afterwards.
      expect(Option.isSome(yield* artifacts.get(yield* artifacts.put(bytesOf("reput"))))).toBe(true)
      expect(yield* repo.remove(other, sharing.name, "all", T30)).toHaveProperty("removed")
      expect(yield* artifacts.get(removed.source.wasm)).toEqual(Option.none())
    }), timeout)

  it.effect("circuits: a prebuilt upload's sample inputs are stored with its source, kept while it lives and deleted with it", () =>
    Effect.gen(function*() {
      const repo = yield* CircuitsRepo
      const artifacts = yield* ArtifactsRepo
      const account = yield* freshAccount
      const plain = yield* circuitRecord(account)
      if (plain.source.kind !== "artifacts") return expect.fail("an artifacts upload")
      const sample_inputs = yield* artifacts.put(yield* uniqueBytes("{\"a\": \"5\"}"))
      const circuit = yield* inserted(account, { source: { ...plain.source, sample_inputs } })
      expect(Option.map(yield* repo.getById(circuit.id), (c) => c.source)).toEqual(Option.some(circuit.source))
      expect(Option.isSome(yield* artifacts.get(sample_inputs))).toBe(true)
      expect(yield* repo.remove(account, circuit.name, "all", T30)).toHaveProperty("removed")
      expect(yield* artifacts.get(sample_inputs)).toEqual(Option.none())
    }), timeout)

  it.effect("circuits: a built circuit's artifacts are kept while it lives and deleted with it", () =>
    Effect.gen(function*() {
      yield* isolate
      const repo = yield* CircuitsRepo
      const artifacts = yield* ArtifactsRepo
      const account = yield* freshAccount
      const circuit = yield* inserted(account)
      const [claimed] = yield* claimBuilds(T0, 1)
      const wasm = yield* artifacts.put(yield* uniqueBytes("built wasm"))
      const zkey = yield* artifacts.put(yield* uniqueBytes("built zkey"))
      expect(Option.isSome(yield* repo.complete(circuit.id, claimed!.attempts, buildOf(wasm, zkey)))).toBe(true)
      expect(yield* repo.remove(account, circuit.name, "all", T60)).toHaveProperty("removed")
      expect(yield* artifacts.get(wasm)).toEqual(Option.none())
      expect(yield* artifacts.get(zkey)).toEqual(Option.none())
    }), timeout)

  it.effect("builds: claimBuilds takes the oldest compiling circuits with a lease and attempts + 1, and no live lease twice", () =>
    Effect.gen(function*() {
      yield* isolate
      const repo = yield* CircuitsRepo
      const account = yield* freshAccount
      const rows = [yield* inserted(account), yield* inserted(account), yield* inserted(account)]
      const claimed = yield* claimBuilds(T0, 2)
      expect(claimed).toEqual(rows.slice(0, 2).map((r) => ({ ...r, lease_expires_at: T60, attempts: 1 })))
      expect(yield* repo.getById(rows[0]!.id)).toEqual(Option.some(claimed[0]))
      expect((yield* claimBuilds(T30, 5)).map((r) => r.id)).toEqual([rows[2]!.id])
      expect(yield* claimBuilds(T30, 5)).toEqual([])
      expect(yield* claimBuilds(T30, 0)).toEqual([])
    }), timeout)

  it.effect("builds: a claim for named circuits takes only those, however old the others", () =>
    Effect.gen(function*() {
      yield* isolate
      const repo = yield* CircuitsRepo
      const account = yield* freshAccount
      const rows = [yield* inserted(account), yield* inserted(account), yield* inserted(account)]
      const mine = yield* repo.claimBuilds({ now: T0, leaseUntil: T60, limit: 5, only: [rows[2]!.id] })
      expect(mine.map((r) => r.id)).toEqual([rows[2]!.id])
      expect(yield* repo.claimBuilds({ now: T0, leaseUntil: T60, limit: 5, only: [] })).toEqual([])
      expect((yield* claimBuilds(T0, 5)).map((r) => r.id)).toEqual([rows[0]!.id, rows[1]!.id])
    }), timeout)

  it.effect("builds: concurrent claims never take the same circuit", () =>
    Effect.gen(function*() {
      yield* isolate
      const account = yield* freshAccount
      const rows = yield* Effect.all(Array.from({ length: 6 }, () => inserted(account)))
      const results = yield* Effect.all(Array.from({ length: 12 }, () => claimBuilds(T0, 1)), { concurrency: "unbounded" })
      const ids = results.flat().map((c) => c.id)
      expect(ids.sort()).toEqual(rows.map((r) => r.id).sort())
    }), timeout)

  it.effect("builds: a lapsed lease is taken over and the old claim can no longer settle; removed circuits are not claimed", () =>
    Effect.gen(function*() {
      yield* isolate
      const repo = yield* CircuitsRepo
      const account = yield* freshAccount
      const circuit = yield* inserted(account)
      const gone = yield* inserted(account)
      expect(yield* repo.remove(account, gone.name, "all", T0)).toHaveProperty("removed")
      const [first] = yield* claimBuilds(T0, 5, T60)
      expect([first?.id, first?.attempts]).toEqual([circuit.id, 1])
      expect(yield* claimBuilds(T30, 5)).toEqual([])
      const [taken] = yield* claimBuilds(T60, 5, T90)
      expect(taken).toEqual({ ...circuit, lease_expires_at: T90, attempts: 2 })
      const build = buildOf(circuit.source.kind === "artifacts" ? circuit.source.wasm : ("" as Digest), ("a".repeat(64)) as Digest)
      expect(yield* repo.complete(circuit.id, 1, build)).toEqual(Option.none())
      expect(yield* repo.fail(circuit.id, 1, { code: "compile_timeout", message: "late" }, T90)).toEqual(Option.none())
      const ready = yield* repo.complete(circuit.id, 2, build)
      const expected: StoredCircuit = {
        ...taken!,
        status: "ready",
        artifacts: build.artifacts,
        constraints: build.constraints,
        inputs: build.inputs,
        public_signals: build.public_signals,
        verification_key: build.verification_key,
        development_only: true,
        updated_at: T30,
        lease_expires_at: null
      }
      expect(ready).toEqual(Option.some(expected))
      expect(yield* repo.getByName(account, circuit.name)).toEqual(Option.some(expected))
      expect(yield* repo.complete(circuit.id, 2, build)).toEqual(Option.none())
    }), timeout)

  it.effect("builds: fail settles with the error (file and line kept); release hands a claim back uncounted", () =>
    Effect.gen(function*() {
      yield* isolate
      const repo = yield* CircuitsRepo
      const account = yield* freshAccount
      const failing = yield* inserted(account)
      const released = yield* inserted(account)
      const removed = yield* inserted(account)
      const claimed = yield* claimBuilds(T0, 3)
      expect(claimed.map((c) => c.id)).toEqual([failing.id, released.id, removed.id])
      const error = { code: "compile_error" as const, message: "syntax error", file: "main.circom", line: 3 }
      expect(yield* repo.fail(failing.id, 1, error, T30)).toEqual(Option.some({ ...failing, status: "failed", error, updated_at: T30, attempts: 1 }))
      expect(yield* repo.release(released.id, 2)).toBe(false)
      expect(yield* repo.release(released.id, 1)).toBe(true)
      expect(yield* repo.getById(released.id)).toEqual(Option.some({ ...released, lease_expires_at: null, attempts: 0 }))
      expect(yield* repo.release(released.id, 1)).toBe(false)
      // A build of a circuit removed meanwhile cannot settle.
      expect(yield* repo.remove(account, removed.name, "all", T30)).toHaveProperty("removed")
      expect(yield* repo.fail(removed.id, 1, error, T30)).toEqual(Option.none())
      expect(yield* repo.release(removed.id, 1)).toBe(false)
      expect((yield* claimBuilds(T30, 5)).map((c) => c.id)).toEqual([released.id])
    }), timeout)
}
