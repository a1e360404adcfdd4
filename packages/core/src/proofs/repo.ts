import { Context, type Effect, type Option } from "effect"
import type { ProofError, ProofRecord, ProofStatus } from "./proof.js"
import type { StorageError } from "../kernel/errors.js"
import type { AccountId, BatchId, ProofId } from "../kernel/ids.js"
import type { Metadata } from "../kernel/metadata.js"
import type { Timestamp } from "../kernel/time.js"
import type { Page, PageOf } from "../kernel/paging.js"

export interface ClaimRequest {
  readonly now: Timestamp
  /** The lease given to every claimed proof. */
  readonly leaseUntil: Timestamp
  readonly maxRunningPerAccount: number
  /** At most this many proofs are claimed by the call. */
  readonly limit: number
}

export interface ProofCompletion {
  readonly proof_blob: string
  /**
   * `proofDigest` of the proof and its public signals: how `POST /verifications` recognises it
   * (the worker always gives it; absent, the proof is verified there as a foreign one).
   */
  readonly proof_digest?: string | undefined
  readonly public_inputs: Readonly<Record<string, string>>
  /** Exactly `completed_at − started_at` (`settledTimes`). */
  readonly duration_ms: number
  /** The prover's own time within `duration_ms`; absent or null when it did not run. */
  readonly proving_ms?: number | null | undefined
  /** When it completed: the proof's `completed_at` and `finished_at`. */
  readonly completed_at: Timestamp
  readonly expires_at: Timestamp
}

export interface ProofFailure {
  readonly error: ProofError
  /** Exactly `finished_at − started_at`, 0 for a proof that never started (`settledTimes`). */
  readonly duration_ms: number
  /** The prover's own time within `duration_ms`; absent or null when it did not run. */
  readonly proving_ms?: number | null | undefined
  /** When it failed: its `finished_at` (a failed proof has no `completed_at`). */
  readonly finished_at: Timestamp
  readonly expires_at: Timestamp
  /**
   * Null: the claimed proof never started after all (its deadline had passed when it was claimed),
   * so its `started_at` is cleared. Absent: the claim's start stays.
   */
  readonly started_at?: null | undefined
}

/** When a cancel happens (the proof's `canceled_at` and `finished_at`), and when the canceled proof's retention ends. */
export interface ProofCancellation {
  readonly canceled_at: Timestamp
  readonly expires_at: Timestamp
}

/** What a cancel takes: one proof, or every proof of a batch. */
export type CancelTarget = { readonly proof: ProofId } | { readonly batch: BatchId }

/** The proofs of an account a usage report counts, between `since` and the query's `now`. */
export interface UsageWindowQuery {
  readonly dayStart: Timestamp
  readonly monthStart: Timestamp
}

/** Worker time of one circuit's settled proofs (`duration_ms` summed), today and this month, by `finished_at`. */
export interface CircuitUsage {
  readonly circuit: string
  readonly proofs_today: number
  readonly proving_ms_today: number
  readonly proofs_month: number
  readonly proving_ms_month: number
}

export interface ProofUsage {
  /** The account's proofs created since `dayStart`, by their status now (statuses with none are absent). */
  readonly createdTodayByStatus: Readonly<Partial<Record<ProofStatus, number>>>
  /** Per circuit, of the proofs that settled (completed or failed) since `monthStart`; circuits with none are absent. */
  readonly circuits: ReadonlyArray<CircuitUsage>
}

/** A claim a worker holds: the proof and the claim's `attempts` (its lease token). */
export interface HeldClaim {
  readonly id: ProofId
  readonly attempts: number
}

/**
 * Proofs and their job queue: one table, rows move `queued → running → completed | failed →
 * expired` (or `queued | running → canceled → expired`). Every transition is one conditional write, so several worker processes may share a
 * database (Postgres: `FOR UPDATE SKIP LOCKED`; SQLite: one writer) and nothing runs twice while
 * its lease holds, and nothing accepted is lost when a worker dies (its lease lapses).
 */
export class ProofsRepo extends Context.Tag("@mzk/core/ProofsRepo")<ProofsRepo, {
  /** Inserts new proofs (all `queued`), all or none. */
  readonly insertMany: (records: ReadonlyArray<ProofRecord>) => Effect.Effect<void, StorageError>
  /** A proof of the account; none for unknown or another account's ids. */
  readonly get: (accountId: AccountId, id: ProofId) => Effect.Effect<Option.Option<ProofRecord>, StorageError>
  /**
   * The account's proofs in id order, optionally only those with `status` and only those whose
   * metadata holds every pair of `metadata` (exact matches); `total` counts the filtered set.
   */
  readonly list: (
    accountId: AccountId,
    query: Page & { readonly status?: ProofStatus | undefined; readonly metadata?: Metadata | undefined }
  ) => Effect.Effect<PageOf<ProofRecord>, StorageError>
  /**
   * Atomically claims up to `limit` proofs and returns them as updated. Candidates are `queued`
   * proofs and `running` ones whose lease has lapsed (`lease_expires_at <= now`: a dead worker's),
   * oldest id first within an account. They are taken in turns across accounts (`takeInTurns`,
   * counting each account's running proofs with a live lease as held), so the account running
   * fewest goes first and no account's queue, however long, holds another's oldest proof back. A
   * candidate is taken only while its account has fewer than `maxRunningPerAccount` running proofs
   * with a live lease (counting those claimed by this call).
   * A claimed row becomes `running` with `started_at = now`, `lease_expires_at = leaseUntil` and
   * `attempts + 1`. Concurrent calls never return the same proof, and the per-account limit holds
   * across them.
   */
  readonly claimNext: (request: ClaimRequest) => Effect.Effect<ReadonlyArray<ProofRecord>, StorageError>
  /**
   * Settles a claimed proof as `completed` only if it is still `running` with this `attempt`
   * (the claim's `attempts`): sets the completion fields (`completed_at` and `finished_at` both
   * the completion's), clears `inputs`, `error` and the lease. Returns the updated row, or none
   * when the claim was lost.
   */
  readonly complete: (id: ProofId, attempt: number, completion: ProofCompletion) => Effect.Effect<Option.Option<ProofRecord>, StorageError>
  /**
   * As `complete`, settling as `failed` with `error`: `finished_at` set, `completed_at` and
   * `proof_blob` stay null, and `started_at` cleared when the failure says the proof never started.
   */
  readonly fail: (id: ProofId, attempt: number, failure: ProofFailure) => Effect.Effect<Option.Option<ProofRecord>, StorageError>
  /**
   * Hands a claimed proof back, only if it is still `running` with this `attempt`: `queued` again,
   * no lease, no `started_at`, and `attempts - 1`, since a worker that stops on purpose is not the
   * proof's fault. Any worker may claim it at once. True when it was handed back.
   */
  readonly release: (id: ProofId, attempt: number) => Effect.Effect<boolean, StorageError>
  /**
   * Cancels the account's `target` proofs that are `queued` or `running` (none of another
   * account's): `canceled` with `canceled_at` (and `finished_at`, the same) and `expires_at`, `inputs` and the lease cleared
   * (`attempts` and `started_at` kept). Returns the rows it moved, in id order. A conditional write
   * like the others, so against a concurrent claim, complete or fail each proof ends canceled or
   * settled, never both; a second cancel moves nothing. Where processes share the database, a
   * move of a running proof is announced to their workers.
   */
  readonly cancel: (
    accountId: AccountId,
    target: CancelTarget,
    cancellation: ProofCancellation
  ) => Effect.Effect<ReadonlyArray<ProofRecord>, StorageError>
  /** The account's proofs of a batch, in id order; none for an unknown or another account's batch. */
  readonly listBatch: (accountId: AccountId, batchId: BatchId) => Effect.Effect<ReadonlyArray<ProofRecord>, StorageError>
  /**
   * Of the claims a worker holds, the ids of those it has lost (`claimHolds` is false: the proof
   * was canceled, or taken over after its lease lapsed; an unknown id is lost too). A proof the
   * claim has settled itself is not lost. One read by primary key, made while the worker runs proofs.
   */
  readonly lostClaims: (claims: ReadonlyArray<HeldClaim>) => Effect.Effect<ReadonlyArray<ProofId>, StorageError>
  /**
   * Moves up to `limit` `completed`, `failed` or `canceled` proofs with `expires_at <= now` to `expired`,
   * earliest `expires_at` first (then id), clearing `proof_blob` and `inputs`; returns the updated
   * rows. Concurrent calls never expire the same proof twice.
   */
  readonly expireDue: (now: Timestamp, limit: number) => Effect.Effect<ReadonlyArray<ProofRecord>, StorageError>
  /**
   * The place of each of `ids` that is a queued proof of the account in that account's queue,
   * 1-based, in the order claims take them (`priority_rank`, then id); ids that are not queued are
   * absent. One statement, counted on the queue's index.
   */
  readonly queuePositions: (accountId: AccountId, ids: ReadonlyArray<ProofId>) => Effect.Effect<ReadonlyMap<ProofId, number>, StorageError>
  /**
   * Fails up to `limit` `queued` proofs whose `deadline_at <= now` (any account), earliest deadline
   * first, as `failed` with `failure` (its `finished_at` is now; such a proof never started, so it has
   * no `started_at`), clearing `inputs`; returns them.
   * A conditional write like the others: a proof claimed meanwhile is left to its worker, which
   * fails it at its deadline itself.
   */
  readonly failOverdue: (now: Timestamp, limit: number, failure: ProofFailure) => Effect.Effect<ReadonlyArray<ProofRecord>, StorageError>
  /** The account's usage report (`GET /usage`), by SQL aggregates. */
  readonly usage: (accountId: AccountId, window: UsageWindowQuery) => Effect.Effect<ProofUsage, StorageError>
  /**
   * The account's completed proof whose `proof_digest` this is (none of another account's, none
   * expired): a proof mzk made, submitted to `POST /verifications`.
   */
  readonly findByDigest: (accountId: AccountId, digest: string) => Effect.Effect<Option.Option<ProofRecord>, StorageError>
  /** Proofs waiting for a worker and being worked on now, over every account: the queue's depth. */
  readonly queueDepth: Effect.Effect<QueueDepth, StorageError>
}>() {}

export interface QueueDepth {
  readonly queued: number
  readonly running: number
}
