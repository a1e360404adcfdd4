import type { ClaimRequest, DeliveriesRepo, Metadata, MetadataPatch, StorageError } from "@mzk/core"
import type { Context, Effect } from "effect"
import type { ColumnDataType, Expression, Kysely, RawBuilder, SelectQueryBuilder, SqlBool } from "kysely"
import type { SqlConnection } from "./connection.js"

/**
 * What a write can announce to the loops of other processes: work for their idle loops, or
 * (`canceledProofs`) running proofs canceled, which their proof workers stop.
 */
export type WorkKind = "proofs" | "deliveries" | "circuits" | "recoveries" | "canceledProofs"

/** What `DeliveriesRepo.claimDue` asks for: due deliveries, at most `maxPerWebhook` of each webhook, in turns across accounts. */
export type DeliveryClaim = Parameters<Context.Tag.Service<typeof DeliveriesRepo>["claimDue"]>[0]

/** Leaves a read as it is, or makes it hold the rows it returns: applied when a query or statement is built. */
export type RowLocking = <DB, TB extends keyof DB, O>(query: SelectQueryBuilder<DB, TB, O>) => SelectQueryBuilder<DB, TB, O>

/**
 * What one database does its own way. Each dialect package builds one and gives it to
 * `makeSqlConnection`; the repositories and migrations of this package are written once and ask it
 * whenever the SQL or the way writers are kept apart differs, never which database they run on.
 *
 * The two ways of keeping writers apart that it abstracts: a database whose transactions each
 * write alone (one writer at a time: nothing can interleave, so locks, re-reads and
 * announcements are nothing), and one with row locks where many processes write at once.
 */
export interface SqlDialect {
  /** Column types whose name differs between databases. */
  readonly columnTypes: {
    /** A 64-bit integer (epoch milliseconds). */
    readonly int64: ColumnDataType
    /** Raw bytes (artifact chunks). */
    readonly bytes: ColumnDataType
  }
  /**
   * For a read whose rows the transaction goes on to write: other writers of those rows wait until
   * it ends. Applied while a statement is built, so the statement is still compiled once.
   */
  readonly lockRows: RowLocking
  /**
   * For a read of rows the transaction relies on without writing them: writers of those rows wait
   * until it ends, readers that share them do not wait on each other.
   */
  readonly shareRows: RowLocking
  /**
   * For a read of rows the transaction takes for itself: they are held until it ends, and rows
   * that another transaction holds are passed over rather than waited for.
   */
  readonly takeRows: RowLocking
  /**
   * Holds these accounts (taken in id order, so two callers never wait on each other in a cycle)
   * until the transaction ends: what makes "count the account's rows, then insert" atomic.
   */
  readonly lockAccounts: (conn: SqlConnection, accountIds: ReadonlyArray<string>) => Effect.Effect<void, StorageError>
  /**
   * The ids of the deliveries a claim takes (see `DeliveriesRepo.claimDue`); runs inside the
   * claim's transaction, which then sets their lease.
   */
  readonly pickDeliveries: (conn: SqlConnection, claim: DeliveryClaim) => Effect.Effect<ReadonlyArray<string>, StorageError>
  /**
   * The ids of the proofs a claim takes (see `ProofsRepo.claimNext`), the per-account limit
   * counted; runs inside the claim's transaction, which then marks them running.
   */
  readonly pickProofs: (conn: SqlConnection, claim: ClaimRequest) => Effect.Effect<ReadonlyArray<string>, StorageError>
  /**
   * Tells the other processes sharing the database that work was written, so their idle loops
   * start at once; inside a transaction, only if and when it commits. Nothing where no other
   * process shares it.
   */
  readonly announce: (conn: SqlConnection, work: WorkKind) => Effect.Effect<void, StorageError>
  /**
   * Why the database failed, in a sentence an operator can act on ("the disk is full", with the
   * driver's code), from its driver's error: a storage error's message, which readiness shows
   * and the log carries beside the driver's own text. Never a path, a query or a value; undefined
   * for a failure the dialect does not recognise.
   */
  readonly describeFailure: (cause: unknown) => string | undefined
  /** How the JSON text of a `metadata` column is matched and updated. */
  readonly metadata: MetadataSql
}

/**
 * Metadata is JSON text in every dialect, as every structured column is; what reads into it is the
 * dialect's own JSON function.
 */
export interface MetadataSql {
  /** A condition: the row's `metadata` column holds every pair of `filter` (keys are `metadataKeyProblem`-clean). */
  readonly matches: (filter: Metadata) => Expression<SqlBool>
  /** The column's new value: the stored pairs with `patch` laid over them (a null value deletes its key). */
  readonly merged: (patch: MetadataPatch) => RawBuilder<string>
  /** Makes what serves `matches` on `table` (run by the migration that adds the column), or nothing. */
  readonly index: (db: Kysely<unknown>, table: string) => Promise<void>
}
