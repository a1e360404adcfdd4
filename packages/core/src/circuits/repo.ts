import { Context, type Effect, type Either, type Option, type Stream } from "effect"
import type { ArtifactStreams, StagedArtifact } from "./artifactStreams.js"
import type { StorageError } from "../kernel/errors.js"
import type { AccountId, CircuitId } from "../kernel/ids.js"
import type { Page, PageOf } from "../kernel/paging.js"
import type { ProvingSystem } from "../kernel/provingSystem.js"
import type { Timestamp } from "../kernel/time.js"
import type { CircuitArtifacts, CircuitError, Digest, StoredCircuit } from "./circuit.js"

/** What a finished build adds to a `compiling` circuit. */
export interface CircuitBuild {
  readonly artifacts: CircuitArtifacts
  readonly constraints: number
  readonly inputs: StoredCircuit["inputs"]
  readonly public_signals: ReadonlyArray<string>
  readonly verification_key: unknown
  /** The system the zkey was set up for (a prebuilt upload's is read from its header). */
  readonly proving_system: ProvingSystem
  readonly development_only: boolean
  readonly updated_at: Timestamp
}

/** Why `insert` refused: one of the account's limits is reached. */
export type CircuitInsertRefusal = "circuit_limit" | "compilation_limit"

/** Which live version of a name: exactly version N, the newest one whatever its status, or the newest `ready` one. */
export type CircuitVersionPick = number | "newest" | "newest_ready"

/** What `remove` removes: one live version, or every live version of the name. */
export type CircuitRemoval = number | "all"

/**
 * Accounts' circuits and their compile-job queue: one table, rows move `compiling → ready |
 * failed`. Like proofs, a build is claimed with a lease (Postgres: `FOR UPDATE SKIP LOCKED`), so
 * several workers share a database, a build runs once while its lease holds, and a worker that
 * dies mid-build has its job taken over when the lease lapses. A name has versions, one row each,
 * numbered per account and name (unique on account, name and version). Removed circuits stay as
 * rows (hidden, their number never given again) so proofs made with them still verify.
 */
export class CircuitsRepo extends Context.Tag("@mzk/core/CircuitsRepo")<CircuitsRepo, {
  /**
   * Inserts a `compiling` circuit as the next version of its name (1 + the highest version the name
   * ever had in the account, removed ones included; the record's own `version` is not read),
   * atomically with its checks: refused when the account has `maxCircuits` live circuits (every
   * live version counts), or `maxCompiling` of them `compiling`. When the name's newest live
   * version is `failed`, it is replaced: removed as of the new one's `created_at` (its row kept, as
   * `remove` keeps it; its artifacts deleted unless another live circuit, the new one included,
   * refers to them), and its id returned. The checks and the numbering hold under concurrency and
   * across processes: concurrent uploads of one name get distinct versions, and of concurrent
   * uploads after a failed version, one replaces it.
   */
  readonly insert: (
    circuit: StoredCircuit,
    limits: { readonly maxCircuits: number; readonly maxCompiling: number }
  ) => Effect.Effect<
    Either.Either<{ readonly version: number; readonly replaced: CircuitId | null }, CircuitInsertRefusal>,
    StorageError
  >
  /** The account's live version of that name that `pick` names (default: the newest). */
  readonly getByName: (
    owner: AccountId,
    name: string,
    pick?: CircuitVersionPick
  ) => Effect.Effect<Option.Option<StoredCircuit>, StorageError>
  /** Any circuit by id, removed ones included (a proof's verification needs its key). */
  readonly getById: (id: CircuitId) => Effect.Effect<Option.Option<StoredCircuit>, StorageError>
  /**
   * Of these circuits, the ones that are no longer live (removed). Inside a transaction the live
   * ones are held against removal until it ends, so a proof queued in it is never of a circuit
   * whose artifacts were deleted meanwhile.
   */
  readonly holdLive: (ids: ReadonlyArray<CircuitId>) => Effect.Effect<ReadonlyArray<CircuitId>, StorageError>
  /** The newest live version of each of the account's names, newest first (id order). */
  readonly list: (owner: AccountId, page: Page) => Effect.Effect<PageOf<StoredCircuit>, StorageError>
  /**
   * The live versions of one name, newest (highest version) first; a page's cursors are circuit
   * ids, and a cursor that is no live version of the name gives an empty page.
   */
  readonly listVersions: (owner: AccountId, name: string, page: Page) => Effect.Effect<PageOf<StoredCircuit>, StorageError>
  /**
   * Removes one live version of a name, or every live version, unless proofs of any of them are
   * `queued` or `running` (checked in the same transaction as the removal; then nothing is
   * removed): `{ removed }` (what was removed, ids and versions), `in_use`, or `not_found` (no such
   * live version). The rows stay, hidden; their artifacts are deleted unless a live circuit shares them.
   */
  readonly remove: (
    owner: AccountId,
    name: string,
    which: CircuitRemoval,
    now: Timestamp
  ) => Effect.Effect<
    { readonly removed: ReadonlyArray<{ readonly id: CircuitId; readonly version: number }> } | "in_use" | "not_found",
    StorageError
  >
  /**
   * Claims up to `limit` builds: `compiling` circuits with no lease or a lapsed one, oldest first.
   * A claimed row gets `lease_expires_at = leaseUntil` and `attempts + 1`. Concurrent calls never
   * return the same circuit.
   */
  readonly claimBuilds: (request: {
    readonly now: Timestamp
    readonly leaseUntil: Timestamp
    readonly limit: number
    /** Only these circuits (a command that builds what it just added, and nothing of anyone else's). */
    readonly only?: ReadonlyArray<CircuitId> | undefined
  }) => Effect.Effect<ReadonlyArray<StoredCircuit>, StorageError>
  /** Settles a claimed build as `ready`, only while it is live, `compiling` and claimed with this `attempt`. */
  readonly complete: (id: CircuitId, attempt: number, build: CircuitBuild) => Effect.Effect<Option.Option<StoredCircuit>, StorageError>
  /**
   * Hands a claimed build back, only while it is `compiling` with this `attempt`: no lease, and
   * `attempts - 1`, since a worker that stops on purpose is not the build's fault. True when it was
   * handed back; any worker may claim it at once.
   */
  readonly release: (id: CircuitId, attempt: number) => Effect.Effect<boolean, StorageError>
  /** Settles a claimed build as `failed` with `error`, only while it is `compiling` with this `attempt`. */
  readonly fail: (
    id: CircuitId,
    attempt: number,
    error: CircuitError,
    now: Timestamp
  ) => Effect.Effect<Option.Option<StoredCircuit>, StorageError>
}>() {}

/**
 * Content-addressed bytes (uploads and built artifacts), stored in the database in chunks so any
 * worker on any host can read them; SQLite and Postgres alike. Writing the same bytes twice stores
 * them once. Large artifacts stream both ways (`stage`/`publish`/`write`, `read`), so no process
 * holds a whole zkey; `put` and `get` are the same operations on bytes in memory (`wholeArtifacts`).
 */
export class ArtifactsRepo extends Context.Tag("@mzk/core/ArtifactsRepo")<ArtifactsRepo, ArtifactStreams & {
  /** Stages and publishes `chunks` (the stage's scope is the call's): the staged digest, size and chunks. */
  readonly write: <E>(chunks: Stream.Stream<Uint8Array, E>) => Effect.Effect<StagedArtifact, E | StorageError>
  /** Stores `bytes` under their SHA-256 (idempotent) and returns the digest. */
  readonly put: (bytes: Uint8Array) => Effect.Effect<Digest, StorageError>
  /** The bytes of `digest`, reassembled from their chunks; none when unknown. */
  readonly get: (digest: Digest) => Effect.Effect<Option.Option<Uint8Array>, StorageError>
}>() {}
