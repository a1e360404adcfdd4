import { describe, expect, it } from "@effect/vitest"
import {
  Accounts,
  type AccountId,
  ArtifactsRepo,
  AuditLog,
  type BuildInput,
  CircuitBuilds,
  Circuits,
  CircuitsConfig,
  type CircuitsConfigShape,
  CircuitsRepo,
  DEFAULT_CIRCUITS_CONFIG,
  DEFAULT_PROOFS_CONFIG,
  type Digest,
  type EventRecord,
  EventsRepo,
  type Principal,
  ProofLoops,
  Proofs,
  ProofsConfig,
  SCOPES,
  type StoredCircuit,
  timestampFromMillis,
  uploadPathConflicts
} from "@mzk/core"
import { FakeCompiler, FakeCompilerCalls, type FakeCompilerOptions, testCore } from "@mzk/testkit"
import { Effect, Exit, Layer, Option, Scope, TestClock } from "effect"
import { createHash } from "node:crypto"

/** Storage lists newest first; this file reads events in the order they happened. */
const oldestFirst = <A>(items: ReadonlyArray<A>): Array<A> => [...items].reverse()

/** The core over the memory store with a fake compiler whose calls the test can read (one instance: layers are shared by reference). */
const coreWith = (options: FakeCompilerOptions = {}) => {
  const compiler = FakeCompiler(options)
  return testCore(undefined, { compiler }).pipe(Layer.provideMerge(compiler))
}

/** The core with the build loop and the proof loops running, the fake compiler and prover, on TestClock. */
const withBuilds = (config: Partial<CircuitsConfigShape> = {}, compiler: FakeCompilerOptions = {}) =>
  Layer.mergeAll(CircuitBuilds.layer, ProofLoops).pipe(
    Layer.provideMerge(coreWith(compiler)),
    Layer.provideMerge(Layer.succeed(CircuitsConfig, { ...DEFAULT_CIRCUITS_CONFIG, pollIntervalMs: 60_000, ...config })),
    Layer.provide(Layer.succeed(ProofsConfig, DEFAULT_PROOFS_CONFIG))
  )

/** Lets forked fibers (the loops, running builds) catch up without moving the clock. */
const settle = Effect.repeatN(Effect.yieldNow(), 50)
const advance = (duration: Parameters<typeof TestClock.adjust>[0]) => Effect.zipRight(TestClock.adjust(duration), settle)

const principalOf = (account_id: AccountId): Principal => ({ account_id, scopes: SCOPES, via: { kind: "session" } })
const newAccount = Effect.map(Effect.flatMap(Accounts, (a) => a.create({ name: "Acme" })), (a) => a.id)

const bytesOf = (text: string) => new TextEncoder().encode(text)
const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex") as Digest

/** A circuit with a scalar private input, a 2×1 public input and one output (fake compiler format, see FakeCompiler). */
const SUM = `pragma circom 2.1.6;
include "lib/util.circom";
template Sum() {
  signal input a;
  signal input x[2][1];
  signal output out;
  out <== a + x[0][0] + x[1][0];
}
component main {public [x]} = Sum();
`
const circom = (main: string, extra: Record<string, string> = {}): Extract<BuildInput, { kind: "circom" }> => ({
  kind: "circom",
  main: "main.circom",
  files: Object.fromEntries(Object.entries({ "main.circom": main, "lib/util.circom": "// helpers\n", ...extra }).map(([p, t]) => [p, bytesOf(t)]))
})

const upload = (account: AccountId, name: string, main = SUM, description?: string, extra?: Record<string, string>) =>
  Effect.flatMap(Circuits, (circuits) =>
    circuits.create(account, description === undefined ? { name, source: circom(main, extra) } : { name, description, source: circom(main, extra) }))

const eventsOf = (account: AccountId, type: string) =>
  Effect.map(Effect.flatMap(EventsRepo, (repo) => repo.list(account, { limit: 100 })), (page) =>
    oldestFirst(page.items).filter((e: EventRecord) => e.type === type))

const stored = (account: AccountId, name: string) =>
  Effect.map(Effect.flatMap(CircuitsRepo, (repo) => repo.getByName(account, name)), Option.getOrThrow)

describe("Circuits: uploads", () => {
  it.effect("an upload is a compiling record, listed after the built-in circuits and visible to its account only", () =>
    Effect.gen(function*() {
      const circuits = yield* Circuits
      const account = yield* newAccount
      const other = yield* newAccount
      const created = yield* upload(account, "sum", SUM, "Adds three numbers")
      expect(created).toMatchObject({
        name: "sum",
        owner: account,
        status: "compiling",
        error: null,
        description: "Adds three numbers",
        constraints: null,
        inputs: [],
        public_signals: [],
        verification_key: null,
        artifacts: null,
        created_at: "1970-01-01T00:00:00.000Z"
      })
      expect(created.id).toMatch(/^cir_/)
      expect(Object.keys(created)).not.toContain("source")
      expect((yield* circuits.list(account)).map((c) => c.name)).toEqual(["multiplier", "range", "hash_preimage", "merkle_membership", "sum"])
      expect((yield* circuits.list(other)).map((c) => c.name)).toEqual(["multiplier", "range", "hash_preimage", "merkle_membership"])
      expect(yield* circuits.get(account, "sum")).toEqual(Option.some(created))
      expect(yield* circuits.get(other, "sum")).toEqual(Option.none())
      expect(Option.map(yield* circuits.get(other, "range"), (c) => c.owner)).toEqual(Option.some("builtin"))
      // Every uploaded file is stored by digest.
      const source = (yield* stored(account, "sum")).source
      expect(source).toEqual({ kind: "circom", main: "main.circom", files: { "main.circom": sha256(bytesOf(SUM)), "lib/util.circom": sha256(bytesOf("// helpers\n")) } })
      expect(yield* (yield* ArtifactsRepo).get(sha256(bytesOf(SUM)))).toEqual(Option.some(bytesOf(SUM)))
    }).pipe(Effect.provide(testCore())))

  it.effect("refusals: a built-in name is taken, a bad name, description or main file is invalid, and nothing is stored", () =>
    Effect.gen(function*() {
      const circuits = yield* Circuits
      const artifacts = yield* ArtifactsRepo
      const account = yield* newAccount
      yield* upload(account, "sum")
      const cases: ReadonlyArray<[Effect.Effect<unknown, { readonly _tag: string; readonly message: string }, Circuits>, string, RegExp | string]> = [
        [upload(account, "multiplier", "// a\ncomponent main = M();"), "CircuitNameTaken", /built-in circuit/],
        [upload(account, "multiplier@1", "// b\ncomponent main = M();"), "InvalidRequest", "name"],
        [upload(account, "bad name!", "// c\ncomponent main = M();"), "InvalidRequest", "name"],
        [upload(account, "x".repeat(65), "// c\ncomponent main = M();"), "InvalidRequest", "name"],
        [upload(account, "described", "// d\ncomponent main = M();", "nul\u0000"), "InvalidRequest", "description"],
        [upload(account, "described", "// d\ncomponent main = M();", "x".repeat(1025)), "InvalidRequest", "description"],
        [circuits.create(account, { name: "nomain", source: { kind: "circom", main: "main.circom", files: { "other.circom": bytesOf("// e") } } }), "InvalidRequest", "main"],
        [circuits.create(account, { name: "escapes", source: { kind: "circom", main: "main.circom", files: { "main.circom": bytesOf("// f"), "../up.circom": bytesOf("// g") } } }), "InvalidRequest", "sources"],
        // A file and a folder of one name cannot be laid out to build, whichever way the upload came in (parts, an archive, the CLI).
        [upload(account, "both", "// h\ncomponent main = M();", undefined, { "lib.circom": "// i", "lib.circom/x.circom": "// j" }), "InvalidRequest", "sources"],
        [circuits.create(account, { name: "noir_both", source: { kind: "noir", files: { "Nargo.toml": bytesOf("// k"), "src/main.nr": bytesOf("// l"), "src/main.nr/x.nr": bytesOf("// m") } } }), "InvalidRequest", "noir_sources"]
      ]
      for (const [attempt, tag, where] of cases) {
        const error = yield* Effect.flip(attempt)
        expect(error._tag).toBe(tag)
        if (typeof where === "string") expect((error as { details?: ReadonlyArray<{ path: string }> }).details?.map((d) => d.path)).toEqual([where])
        else expect(error.message).toMatch(where)
      }
      for (const text of ["// a\ncomponent main = M();", "// b\ncomponent main = M();", "// e", "// f", "// g", "// i", "// j", "// m"]) {
        expect(yield* artifacts.get(sha256(bytesOf(text)))).toEqual(Option.none())
      }
      expect((yield* circuits.list(account)).length).toBe(5)
    }).pipe(Effect.provide(testCore())))

  it.effect("limits: circuits per account and compiling at once are refused with messages naming the limit; nothing half-stored", () =>
    Effect.gen(function*() {
      const account = yield* newAccount
      yield* upload(account, "one", "// 1\ncomponent main = M();")
      const compiling = yield* Effect.flip(upload(account, "two", "// 2\ncomponent main = M();"))
      expect(compiling._tag).toBe("CompilationLimitReached")
      expect(compiling.message).toMatch(/at most 1 circuits compiling at once \(the concurrent-compilations limit\)/)
      expect(yield* (yield* ArtifactsRepo).get(sha256(bytesOf("// 2\ncomponent main = M();")))).toEqual(Option.none())
      yield* advance("100 millis")
      yield* upload(account, "two", "// 2\ncomponent main = M();")
      yield* advance("100 millis")
      const full = yield* Effect.flip(upload(account, "three", "// 3\ncomponent main = M();"))
      expect(full._tag).toBe("CircuitLimitReached")
      expect(full.message).toMatch(/at most 2 circuits, every live version counted \(the circuits-per-account limit\)/)
      // A new version of a name is one more circuit too.
      expect((yield* Effect.flip(upload(account, "one", "// 1b\ncomponent main = M();")))._tag).toBe("CircuitLimitReached")
      expect((yield* (yield* Circuits).list(account)).filter((c) => c.owner !== "builtin").map((c) => [c.name, c.status]))
        .toEqual([["two", "ready"], ["one", "ready"]])
    }).pipe(Effect.provide(withBuilds({ maxCircuitsPerAccount: 2, maxCompilingPerAccount: 1 }))))
})

describe("uploadPathConflicts: no path lies inside another that is a file", () => {
  it("names each path inside a file, at any depth, and nothing else", () => {
    expect(uploadPathConflicts(["main.circom", "lib.circom", "lib.circom/x.circom", "a/b", "a/b/c/d.circom", "a/bc.circom", "lib/x.circom"])).toEqual([
      { path: "lib.circom/x.circom", message: 'the path "lib.circom/x.circom" is inside "lib.circom", which is a file, not a folder' },
      { path: "a/b/c/d.circom", message: 'the path "a/b/c/d.circom" is inside "a/b", which is a file, not a folder' }
    ])
    expect(uploadPathConflicts(["main.circom", "lib/a.circom", "lib/b/c.circom", "lib.circom", "libx/y.circom"])).toEqual([])
  })
})

describe("Circuits: the trusted setup is known at upload", () => {
  it.effect("without a setup, circom sources are SetupUnavailable with the compiler's message and nothing is stored; prebuilt uploads are taken", () =>
    Effect.gen(function*() {
      const circuits = yield* Circuits
      const account = yield* newAccount
      const refused = yield* Effect.flip(upload(account, "sum"))
      expect(refused).toMatchObject({ _tag: "SetupUnavailable", message: "no ptau here: give one" })
      expect(yield* (yield* ArtifactsRepo).get(sha256(bytesOf(SUM)))).toEqual(Option.none())
      expect(yield* circuits.get(account, "sum")).toEqual(Option.none())
      const sym = "signal input a;\ncomponent main = T();\n"
      const prebuilt = yield* circuits.create(account, {
        name: "prebuilt",
        source: { kind: "artifacts", wasm: bytesOf("w"), zkey: bytesOf("z"), sym: bytesOf(sym), r1cs: null }
      })
      expect(prebuilt).toMatchObject({ status: "compiling", development_only: false })
    }).pipe(Effect.provide(coreWith({ setup: { available: false, message: "no ptau here: give one" } }))))

  it.effect("a development setup marks the circuit development_only from the upload on, and it stays so when ready", () =>
    Effect.gen(function*() {
      const circuits = yield* Circuits
      const account = yield* newAccount
      expect((yield* upload(account, "sum")).development_only).toBe(true)
      expect((yield* circuits.list(account)).find((c) => c.name === "sum")?.development_only).toBe(true)
      yield* advance("100 millis")
      expect(Option.map(yield* circuits.get(account, "sum"), (c) => [c.status, c.development_only])).toEqual(Option.some(["ready", true]))
      expect((yield* eventsOf(account, "circuit.ready"))[0]?.data).toMatchObject({ development_only: true })
    }).pipe(Effect.provide(withBuilds({}, { setup: { available: true, developmentOnly: true } }))))
})

describe("Circuits: a failed circuit's name", () => {
  it.effect("is taken by the next upload, which replaces the failed newest version (audited as removed, replaced_by the new one) with the next number; a live one's makes one more version", () =>
    Effect.gen(function*() {
      const circuits = yield* Circuits
      const account = yield* newAccount
      const failed = yield* upload(account, "sum", `${SUM}// fake:fail compile_error nope\n`)
      yield* advance("100 millis")
      expect(Option.map(yield* circuits.get(account, "sum"), (c) => c.status)).toEqual(Option.some("failed"))
      const fixed = yield* upload(account, "sum")
      expect(fixed).toMatchObject({ status: "compiling", error: null, version: 2 })
      expect(fixed.id).not.toBe(failed.id)
      expect((yield* circuits.list(account)).filter((c) => c.name === "sum").map((c) => c.id)).toEqual([fixed.id])
      // The failed record stays readable by id (as removed circuits do), never by name.
      expect(Option.map(yield* (yield* CircuitsRepo).getById(failed.id!), (c) => c.status)).toEqual(Option.some("failed"))
      const entries = (yield* (yield* AuditLog).list(account, {})).entries
      expect(entries.map((e) => [e.action, e.target.id, e.changes])).toEqual([
        ["circuit.created", fixed.id, null],
        ["circuit.removed", failed.id, [{ field: "replaced_by", from: null, to: fixed.id }]],
        ["circuit.created", failed.id, null]
      ])
      // Compiling, then ready: an upload is one more version, and replaces nothing.
      yield* advance("100 millis")
      const third = yield* upload(account, "sum", `${SUM}// third\n`)
      expect(third.version).toBe(3)
      expect(Option.map(yield* circuits.get(account, "sum@2"), (c) => [c.id, c.status])).toEqual(Option.some([fixed.id, "ready"]))
      expect(Option.map(yield* circuits.get(account, "sum"), (c) => [c.id, c.status])).toEqual(Option.some([third.id, "compiling"]))
      expect(yield* circuits.get(account, "sum@1")).toEqual(Option.none())
    }).pipe(Effect.provide(withBuilds())))
})

describe("Circuits: the build loop on TestClock", () => {
  it.effect("an upload wakes the loop at once; a build makes it ready with what the compiler derived and fires circuit.ready", () =>
    Effect.gen(function*() {
      const circuits = yield* Circuits
      const account = yield* newAccount
      yield* upload(account, "sum")
      yield* advance("99 millis")
      expect(Option.map(yield* circuits.get(account, "sum"), (c) => c.status)).toEqual(Option.some("compiling"))
      yield* advance("1 millis")
      const ready = Option.getOrThrow(yield* circuits.get(account, "sum"))
      expect(ready).toMatchObject({
        status: "ready",
        error: null,
        constraints: 3,
        inputs: [
          { name: "a", visibility: "private", kind: "field", dimensions: [] },
          { name: "x", visibility: "public", kind: "field", dimensions: [2, 1] }
        ],
        public_signals: ["out", "x[0][0]", "x[1][0]"],
        verification_key: { protocol: "groth16", nPublic: 3 },
        development_only: false,
        updated_at: "1970-01-01T00:00:00.100Z"
      })
      const artifacts = yield* ArtifactsRepo
      expect(Option.map(yield* artifacts.get(ready.artifacts!.wasm), (b) => new TextDecoder().decode(b).startsWith("fake-wasm"))).toEqual(Option.some(true))
      const [event, ...more] = yield* eventsOf(account, "circuit.ready")
      expect(more).toEqual([])
      expect(event?.data).toEqual({ name: "sum", version: 1, status: "ready", proving_system: "groth16", constraints: 3, development_only: false, created_at: "1970-01-01T00:00:00.000Z", metadata: {} })
      expect(yield* eventsOf(account, "circuit.failed")).toEqual([])
    }).pipe(Effect.provide(withBuilds())))

  it.effect("a compile error fails the circuit with code, message, file and line, and fires circuit.failed", () =>
    Effect.gen(function*() {
      const circuits = yield* Circuits
      const account = yield* newAccount
      yield* upload(account, "broken", "template T() {\n  signal input a\n// fake:fail compile_error Parse error: expected ';'\n}\ncomponent main = T();")
      yield* upload(account, "escaping", `include "../../etc/passwd";\ncomponent main = T();`)
      yield* advance("100 millis")
      const broken = Option.getOrThrow(yield* circuits.get(account, "broken"))
      const error = { code: "compile_error", message: "Parse error: expected ';'", file: "main.circom", line: 3 }
      expect(broken).toMatchObject({ status: "failed", error, constraints: null, artifacts: null })
      const escaping = Option.getOrThrow(yield* circuits.get(account, "escaping"))
      expect(escaping.error).toMatchObject({ code: "include_outside_upload", file: "main.circom", line: 1 })
      const failed = yield* eventsOf(account, "circuit.failed")
      expect(failed.map((e) => e.data).sort((x, y) => String(x.name).localeCompare(String(y.name)))).toEqual([
        { name: "broken", version: 1, status: "failed", error, created_at: "1970-01-01T00:00:00.000Z", metadata: {} },
        { name: "escaping", version: 1, status: "failed", error: escaping.error, created_at: "1970-01-01T00:00:00.000Z", metadata: {} }
      ])
    }).pipe(Effect.provide(withBuilds({ buildConcurrency: 2 }))))

  it.effect("a build past the time limit fails as compile_timeout, naming the limit", () =>
    Effect.gen(function*() {
      const account = yield* newAccount
      yield* upload(account, "slow", `// fake:duration 20000\ncomponent main = T();`)
      yield* advance("10 seconds")
      const slow = yield* stored(account, "slow")
      expect(slow.status).toBe("failed")
      expect(slow.error).toEqual({ code: "compile_timeout", message: "Compilation exceeded the time limit of 10 s" })
    }).pipe(Effect.provide(withBuilds({ buildTimeoutMs: 10_000 }))))

  it.effect("builds run at most buildConcurrency at once; the next starts when one ends", () =>
    Effect.gen(function*() {
      const account = yield* newAccount
      for (const name of ["a", "b", "c"]) yield* upload(account, name, `// ${name}\ncomponent main = T();`)
      const calls = yield* FakeCompilerCalls
      yield* settle
      expect((yield* calls).length).toBe(2)
      yield* advance("100 millis")
      expect((yield* calls).length).toBe(3)
      expect((yield* (yield* CircuitBuilds).inFlight)).toBe(1)
      yield* advance("100 millis")
      expect((yield* (yield* CircuitBuilds).inFlight)).toBe(0)
    }).pipe(Effect.provide(withBuilds({ buildConcurrency: 2, maxCompilingPerAccount: 5 }))))

  it.effect("a build whose worker died is taken over once its lease lapses (build time limit + margin)", () =>
    Effect.gen(function*() {
      const account = yield* newAccount
      // Uploaded and claimed by a worker that then died, before this process's loop started.
      yield* upload(account, "orphan")
      const dead = yield* (yield* CircuitsRepo).claimBuilds({ now: timestampFromMillis(0), leaseUntil: timestampFromMillis(15_000), limit: 10 })
      expect(dead.map((c) => c.attempts)).toEqual([1])
      const scope = yield* Scope.make()
      yield* Layer.buildWithScope(CircuitBuilds.layer, scope)
      yield* advance("14900 millis")
      expect((yield* stored(account, "orphan")).status).toBe("compiling")
      expect((yield* (yield* FakeCompilerCalls)).length).toBe(0)
      // The lease lapses at 15 s; the loop, polling every second, takes the build over then.
      yield* advance("100 millis")
      expect((yield* (yield* FakeCompilerCalls)).length).toBe(1)
      yield* advance("100 millis")
      const taken = yield* stored(account, "orphan")
      expect([taken.status, taken.attempts]).toEqual(["ready", 2])
      yield* Scope.close(scope, Exit.void)
    }).pipe(Effect.provide(coreWith()), Effect.provide(Layer.succeed(CircuitsConfig, { ...DEFAULT_CIRCUITS_CONFIG, pollIntervalMs: 1_000, buildTimeoutMs: 10_000, leaseMarginMs: 5_000 }))))

  it.effect("a build whose process died twice while it ran (it keeps killing its workers) fails as internal, not tried a third time", () =>
    Effect.gen(function*() {
      const account = yield* newAccount
      const repo = yield* CircuitsRepo
      yield* upload(account, "killer")
      // Two claims whose processes died: their leases lapsed without a settle or a release.
      for (let i = 0; i < 2; i++) yield* repo.claimBuilds({ now: timestampFromMillis(0), leaseUntil: timestampFromMillis(0), limit: 1 })
      const scope = yield* Scope.make()
      yield* Layer.buildWithScope(CircuitBuilds.layer, scope)
      yield* settle
      const killer = yield* stored(account, "killer")
      expect([killer.status, killer.attempts, killer.error]).toEqual(["failed", 3, { code: "internal", message: "The build was interrupted 2 times; giving up" }])
      expect((yield* eventsOf(account, "circuit.failed")).map((e) => e.data.name)).toEqual(["killer"])
      expect((yield* (yield* FakeCompilerCalls)).length).toBe(0)
      yield* Scope.close(scope, Exit.void)
    }).pipe(Effect.provide(coreWith())))

  it.effect("stopping the loop hands a running build back at once (no lease, attempt uncounted)", () =>
    Effect.gen(function*() {
      const account = yield* newAccount
      const scope = yield* Scope.make()
      yield* Layer.buildWithScope(CircuitBuilds.layer, scope)
      yield* upload(account, "interrupted", "// fake:duration 5000\ncomponent main = T();")
      yield* advance("1 second")
      expect((yield* stored(account, "interrupted")).attempts).toBe(1)
      yield* Scope.close(scope, Exit.void)
      const back = yield* stored(account, "interrupted")
      expect([back.status, back.lease_expires_at, back.attempts]).toEqual(["compiling", null, 0])
    }).pipe(Effect.provide(coreWith())))

  it.effect("a circuit removed while it builds is never settled: no event, its build's artifacts not kept", () =>
    Effect.gen(function*() {
      const circuits = yield* Circuits
      const account = yield* newAccount
      const created = yield* upload(account, "gone", "// fake:duration 1000\ncomponent main = T();")
      yield* advance("500 millis")
      yield* circuits.remove(account, "gone")
      yield* advance("1 second")
      const row = Option.getOrThrow(yield* (yield* CircuitsRepo).getById(created.id!)) as StoredCircuit
      expect([row.status, row.artifacts]).toEqual(["compiling", null])
      expect(yield* eventsOf(account, "circuit.ready")).toEqual([])
      expect(yield* (yield* ArtifactsRepo).get(sha256(bytesOf("fake-wasm\n// fake:duration 1000\ncomponent main = T();")))).toEqual(Option.none())
      expect((yield* (yield* CircuitBuilds).inFlight)).toBe(0)
    }).pipe(Effect.provide(withBuilds())))
})

describe("Circuits: proofs of accounts' circuits", () => {
  it.effect("a ready circuit proves nested array inputs; public inputs are named per element; verify finds its key", () =>
    Effect.gen(function*() {
      const proofs = yield* Proofs
      const account = yield* newAccount
      const principal = principalOf(account)
      yield* upload(account, "sum")
      yield* advance("100 millis")
      const queued = yield* proofs.create(principal.account_id, { type: "sum", inputs: { a: 1, x: [[2], ["3"]] } })
      expect(queued).toMatchObject({ type: "sum", circuit: "sum", status: "queued", public_inputs: { "x[0][0]": "2", "x[1][0]": "3" } })
      yield* advance("100 millis")
      const done = yield* proofs.get(account, queued.proof_id)
      expect(done).toMatchObject({ status: "completed", public_inputs: { out: "6", "x[0][0]": "2", "x[1][0]": "3" } })
      expect((yield* proofs.verify(principal.account_id, queued.proof_id)).valid).toBe(true)
    }).pipe(Effect.provide(withBuilds())))

  it.effect("versions: `name` proves with the newest ready version while a newer one builds, `name@N` with exactly N; versions list and remove one", () =>
    Effect.gen(function*() {
      const proofs = yield* Proofs
      const circuits = yield* Circuits
      const account = yield* newAccount
      const inputs = { a: 1, x: [[2], [3]] }
      expect((yield* upload(account, "sum")).version).toBe(1)
      yield* advance("100 millis")
      // Version 2 takes 20 s to build: meanwhile "sum" is version 1.
      expect((yield* upload(account, "sum", `${SUM}// fake:duration 20000\n`)).version).toBe(2)
      yield* settle
      const first = yield* proofs.create(account, { type: "sum", inputs })
      expect(first).toMatchObject({ type: "sum", circuit: "sum", circuit_version: 1 })
      const pinned = yield* proofs.create(account, { type: "sum@1", inputs })
      expect(pinned).toMatchObject({ type: "sum@1", circuit: "sum", circuit_version: 1 })
      const building = yield* Effect.flip(proofs.create(account, { type: "sum@2", inputs }))
      expect(building).toMatchObject({ _tag: "CircuitNotReady", message: expect.stringMatching(/"sum@2" is still compiling/) })
      const unknown = yield* Effect.flip(proofs.create(account, { type: "sum@9", inputs }))
      // The message names the versions the account has, newest first.
      expect(unknown).toMatchObject({ _tag: "InvalidRequest", details: [{ path: "type", message: "unknown proof type \"sum@9\": sum has no version 9 (its versions: 2, 1)" }] })
      // Another account's name says nothing of it.
      const other = yield* newAccount
      expect(yield* Effect.flip(proofs.create(other, { type: "sum@9", inputs }))).toMatchObject({ details: [{ path: "type", message: "unknown proof type \"sum@9\"" }] })
      expect(yield* proofs.create(account, { type: "multiplier@1", inputs: { a: 2, b: 3 } })).toMatchObject({ circuit: "multiplier", circuit_version: 1 })
      expect(yield* Effect.flip(proofs.create(account, { type: "multiplier@2", inputs: { a: 2, b: 3 } }))).toMatchObject({
        _tag: "InvalidRequest",
        details: [{ path: "type", message: "unknown proof type \"multiplier@2\": a built-in circuit has one version: send \"multiplier\"" }]
      })
      // `get` of the name shows the newest, compiling; the list shows each name once, at its newest.
      expect(Option.map(yield* circuits.get(account, "sum"), (c) => [c.version, c.status])).toEqual(Option.some([2, "compiling"]))
      expect((yield* circuits.list(account)).filter((c) => c.name === "sum").map((c) => c.version)).toEqual([2])
      yield* advance("21 seconds")
      expect((yield* proofs.create(account, { type: "sum", inputs })).circuit_version).toBe(2)
      yield* advance("100 millis")
      const completed = (yield* eventsOf(account, "proof.completed")).map((e) => [e.data.proof_id, e.data.circuit_version])
      expect(completed).toContainEqual([first.proof_id, 1])
      expect((yield* eventsOf(account, "circuit.ready")).map((e) => e.data.version)).toEqual([1, 2])

      const listed = yield* circuits.versions(account, "sum", {})
      expect([listed.items.map((c) => c.version), listed.total, listed.has_more]).toEqual([[2, 1], 2, false])
      const older = yield* circuits.versions(account, "sum", { limit: 1, starting_after: listed.items[0]!.id! })
      expect([older.items.map((c) => c.version), older.has_more]).toEqual([[1], false])
      expect(yield* Effect.flip(circuits.versions(account, "sum@1", {}))).toMatchObject({ _tag: "InvalidRequest", details: [{ path: "name" }] })
      expect((yield* Effect.flip(circuits.versions(account, "nothing", {})))._tag).toBe("CircuitNotFound")
      expect((yield* circuits.versions(account, "multiplier", {})).items.map((c) => [c.name, c.version])).toEqual([["multiplier", 1]])

      yield* circuits.remove(account, "sum@1")
      expect(yield* circuits.get(account, "sum@1")).toEqual(Option.none())
      expect((yield* circuits.versions(account, "sum", {})).items.map((c) => c.version)).toEqual([2])
      expect(yield* Effect.flip(circuits.remove(account, "sum@1"))).toMatchObject({ _tag: "CircuitNotFound", message: expect.stringMatching(/"sum@1"/) })
      expect((yield* Effect.flip(circuits.remove(account, "multiplier@1")))._tag).toBe("CircuitInUse")
      // A proof of the removed version still verifies with its own key.
      expect((yield* proofs.verify(account, first.proof_id))).toMatchObject({ valid: true, circuit_version: 1 })
    }).pipe(Effect.provide(withBuilds({ maxCompilingPerAccount: 2 }))))

  it.effect("inputs are checked against the circuit's dimensions, each problem by path", () =>
    Effect.gen(function*() {
      const proofs = yield* Proofs
      const account = yield* newAccount
      yield* upload(account, "sum")
      yield* advance("100 millis")
      const refused = (inputs: Record<string, unknown>) =>
        Effect.map(Effect.flip(proofs.create(principalOf(account).account_id, { type: "sum", inputs: inputs as never })), (e) =>
          e._tag === "InvalidRequest" ? e.details : e._tag)
      expect(yield* refused({ a: 1, x: [[2], [3, 4]] })).toEqual([{ path: "inputs.x.1", message: "must have exactly 1 elements, got 2" }])
      expect(yield* refused({ a: 1, x: [2, [3]] })).toEqual([{ path: "inputs.x.0", message: "must be an array of 1 integer" }])
      expect(yield* refused({ a: 1, x: 2 })).toEqual([{ path: "inputs.x", message: "must be an array of 2 arrays of 1 integer" }])
      expect(yield* refused({ a: [1], x: [[2], ["-3"]] })).toEqual([
        { path: "inputs.a", message: "must be a single integer, not an array" },
        { path: "inputs.x.1.0", message: "must not be negative" }
      ])
      expect(yield* refused({ a: 1, x: [[[2]], 3] })).toEqual([
        { path: "inputs.x.0.0", message: "must be a single integer, not an array" },
        { path: "inputs.x.1", message: "must be an array of 1 integer" }
      ])
    }).pipe(Effect.provide(withBuilds())))

  it.effect("a circuit still compiling or failed is not ready (409); another account's is an unknown type (400)", () =>
    Effect.gen(function*() {
      const proofs = yield* Proofs
      const account = yield* newAccount
      const other = yield* newAccount
      yield* upload(account, "pending", "// fake:duration 5000\ncomponent main = T();")
      yield* upload(account, "broken", "// fake:fail compile_error nope\ncomponent main = T();")
      yield* advance("100 millis")
      const pending = yield* Effect.flip(proofs.create(principalOf(account).account_id, { type: "pending", inputs: {} }))
      expect(pending).toMatchObject({ _tag: "CircuitNotReady", message: expect.stringMatching(/still compiling/) })
      const broken = yield* Effect.flip(proofs.create(principalOf(account).account_id, { type: "broken", inputs: {} }))
      expect(broken).toMatchObject({ _tag: "CircuitNotReady", message: expect.stringMatching(/failed to build \(compile_error\)/) })
      const batch = yield* Effect.flip(proofs.createBatch(principalOf(account).account_id, { proofs: [{ type: "multiplier", inputs: { a: 2, b: 3 } }, { type: "pending", inputs: {} }] }))
      expect(batch._tag).toBe("CircuitNotReady")
      const foreign = yield* Effect.flip(proofs.create(principalOf(other).account_id, { type: "pending", inputs: {} }))
      expect(foreign).toMatchObject({ _tag: "InvalidRequest", details: [{ path: "type", message: `unknown proof type "pending"` }] })
      const foreignBatch = yield* Effect.flip(proofs.createBatch(principalOf(other).account_id, { proofs: [{ type: "multiplier", inputs: { a: 2, b: 3 } }, { type: "broken", inputs: {} }] }))
      expect(foreignBatch).toMatchObject({ _tag: "InvalidRequest", details: [{ path: "proofs.1.type" }] })
      expect((yield* proofs.list(account, {})).total).toBe(0)
    }).pipe(Effect.provide(withBuilds({ buildConcurrency: 2 }))))
})

describe("Circuits: removal", () => {
  it.effect("built-in → in use; unknown or another account's → not found; queued proofs → in use; then removed, its name free", () =>
    Effect.gen(function*() {
      const circuits = yield* Circuits
      const proofs = yield* Proofs
      const account = yield* newAccount
      const other = yield* newAccount
      const builtin = yield* Effect.flip(circuits.remove(account, "multiplier"))
      expect(builtin).toMatchObject({ _tag: "CircuitInUse", message: expect.stringMatching(/built-in circuits cannot be removed/) })
      expect((yield* Effect.flip(circuits.remove(account, "nope")))._tag).toBe("CircuitNotFound")
      yield* upload(account, "sum")
      yield* advance("100 millis")
      expect((yield* Effect.flip(circuits.remove(other, "sum")))._tag).toBe("CircuitNotFound")
      yield* proofs.create(principalOf(account).account_id, { type: "sum", inputs: { a: 1, x: [[2], [3]] } })
      const busy = yield* Effect.flip(circuits.remove(account, "sum"))
      expect(busy).toMatchObject({ _tag: "CircuitInUse", message: expect.stringMatching(/queued or running proofs/) })
      yield* advance("100 millis")
      yield* circuits.remove(account, "sum")
      expect(yield* circuits.get(account, "sum")).toEqual(Option.none())
      expect((yield* circuits.list(account)).map((c) => c.name)).not.toContain("sum")
      yield* upload(account, "sum", "// again\ncomponent main = T();")
    }).pipe(Effect.provide(withBuilds())))

  it.effect("a proof of a removed circuit still verifies against that circuit, even once its name is reused", () =>
    Effect.gen(function*() {
      const circuits = yield* Circuits
      const proofs = yield* Proofs
      const account = yield* newAccount
      const principal = principalOf(account)
      yield* upload(account, "sum")
      yield* advance("100 millis")
      const value = yield* proofs.create(principal.account_id, { type: "sum", inputs: { a: 1, x: [[2], [3]] } })
      yield* advance("100 millis")
      yield* circuits.remove(account, "sum")
      yield* upload(account, "sum", "signal input y;\nsignal output out;\ncomponent main {public [y]} = T();")
      yield* advance("100 millis")
      expect((yield* proofs.verify(principal.account_id, value.proof_id))).toMatchObject({ circuit: "sum", valid: true })
      const again = yield* proofs.create(principal.account_id, { type: "sum", inputs: { y: 4 } })
      yield* advance("100 millis")
      expect((yield* proofs.get(account, again.proof_id)).public_inputs).toEqual({ out: "4", y: "4" })
    }).pipe(Effect.provide(withBuilds())))
})
