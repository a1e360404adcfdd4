import { type ClaimRequest, StorageError } from "@mzk/core"
import { Effect, Exit, FiberRef, Option } from "effect"
import type { ColumnDataType, CompiledQuery, Compilable, Kysely, QueryResult, Transaction } from "kysely"
import type { Database } from "./schema.js"
import type { DeliveryClaim, MetadataSql, RowLocking, WorkKind } from "./sqlDialect.js"
import { compileStatement, type Statement } from "./statement.js"
import type { SyncExecutor } from "./syncExecutor.js"

export type Executor = Kysely<Database> | Transaction<Database>

/**
 * One database handle plus the transaction the current fiber is in, if any, and the database's own
 * ways (`dialect`). Repositories run every query through the connection, so a call made inside
 * `transaction` joins it without being told.
 */
export interface SqlConnection {
  /** What this database does its own way: the repositories ask it, never which database it is. */
  readonly dialect: SqlDialect
  readonly db: Kysely<Database>
  readonly query: <A>(run: (db: Executor) => Promise<A>) => Effect.Effect<A, StorageError>
  /**
   * Runs one built query and gives Kysely's raw result (`rows`, `numAffectedRows`). Prefer it to
   * `query` for single statements: on a synchronous driver (`SyncExecutor`) it runs in the same
   * step when the connection is free, without a promise or a fiber suspension.
   */
  readonly execute: <R>(build: (db: Executor) => Compilable<R>) => Effect.Effect<QueryResult<R>, StorageError>
  /** `execute`, then its rows. */
  readonly rows: <R>(build: (db: Executor) => Compilable<R>) => Effect.Effect<Array<R>, StorageError>
  /** `execute`, then its first row, if any. */
  readonly first: <R>(build: (db: Executor) => Compilable<R>) => Effect.Effect<Option.Option<R>, StorageError>
  /** `execute`, then how many rows it inserted, updated or deleted. */
  readonly affected: (build: (db: Executor) => Compilable<unknown>) => Effect.Effect<number, StorageError>
  /**
   * Compiles `build` once, with placeholders for the named values of `P`, into a `Statement` whose
   * runs only bind values (see `Placeholder` in statement.ts for what a statement may take).
   */
  readonly statement: <P extends Record<string, unknown>, R>(
    build: (db: Kysely<Database>, params: P) => Compilable<R>
  ) => Statement<P, R>
  /** Opens a transaction, or joins the current one: also what makes a multi-statement write atomic. */
  readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | StorageError, R>
  /** `Transactor.afterCommit`: after the outermost `transaction` commits, or at once outside one. */
  readonly afterCommit: (effect: Effect.Effect<void>) => Effect.Effect<void>
  /** A driver's error as a `StorageError`, its message the dialect's reason (`describeFailure`) or `otherwise`. */
  readonly storageError: (cause: unknown, otherwise?: string) => StorageError
}

/**
 * What one database does its own way. Each dialect package builds one and gives it to
 * `makeSqlConnection`; the repositories and migrations of this package are written once and ask it
 * whenever the SQL or the way writers are kept apart differs, never which database they run on.
 *
 * The two ways of keeping writers apart that it abstracts: a database whose transactions each
 * write alone (one writer at a time: nothing can interleave, so locks, re-reads and
 * announcements are nothing), and one with row locks where many processes write at once.
 *
 * It lives beside `SqlConnection` because each names the other (a connection carries its dialect,
 * a dialect's operations run on the connection): apart, the two modules would import each other.
 * The parts it is made of, which need no connection, are in sqlDialect.ts.
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

// What `execute`, `rows`, `first` and `affected` take from a result, for built queries and statements alike.
const wholeOf = <R>(result: QueryResult<R>) => result
const rowsOf = <R>(result: QueryResult<R>) => result.rows
const firstOf = <R>(result: QueryResult<R>) => Option.fromNullable(result.rows[0])
const affectedOf = (result: QueryResult<unknown>) => Number(result.numAffectedRows ?? 0n)

/**
 * The transaction a fiber is in: what its queries run on, whether it is still open (a fiber forked
 * inside it may outlive it), and what `afterCommit` registered to run once it commits.
 */
interface OpenTransaction {
  readonly executor: Executor
  readonly isOpen: () => boolean
  readonly afterCommit: Array<Effect.Effect<void>>
}

const runAll = (effects: ReadonlyArray<Effect.Effect<void>>): Effect.Effect<void> =>
  effects.reduce<Effect.Effect<void>>((all, effect) => Effect.zipRight(all, effect), Effect.void)

/**
 * The connection over `db`, asking `dialect` where the database has its own ways. With `sync` (a
 * synchronous driver), a query runs in the caller's step when no other fiber's transaction holds
 * the connection, and a whole transaction (begin, body, commit) runs in the caller's steps when the
 * connection is free; otherwise, and always without `sync`, queries go through Kysely's executor.
 */
export const makeSqlConnection = (db: Kysely<Database>, dialect: SqlDialect, sync?: SyncExecutor): SqlConnection => {
  const failed = (cause: unknown, otherwise = "the database did not complete the operation") =>
    new StorageError({ message: dialect.describeFailure(cause) ?? otherwise, cause })
  const storageError = (cause: unknown) => failed(cause)

  // A plain value, not an Option: a FiberRef compares old and new values on every set, and an
  // Option compares (and hashes) structurally.
  const current = FiberRef.unsafeMake<OpenTransaction | undefined>(undefined)

  /**
   * Runs what `compile` gives, in the caller's transaction if it is in one, and gives what `shape`
   * makes of the result: in the same step when the query ran at once (a query is one operation of
   * the fiber, not one for the query and more for mapping its result).
   */
  const run = <R, B>(compile: (executor: Executor) => CompiledQuery<R>, shape: (result: QueryResult<R>) => B): Effect.Effect<B, StorageError> =>
    Effect.withFiberRuntime((fiber) => {
      const trx = fiber.getFiberRef(current)
      const executor = trx !== undefined ? trx.executor : db
      let compiled: CompiledQuery<R>
      let now: QueryResult<unknown> | undefined
      try {
        compiled = compile(executor)
        // A fiber forked inside a transaction may outlive it: it has joined only while that is open.
        now = sync?.runNow(compiled, trx !== undefined && trx.isOpen())
      } catch (cause) {
        return Effect.fail(storageError(cause))
      }
      if (now !== undefined) return Effect.succeed(shape(now as QueryResult<R>))
      return Effect.map(Effect.tryPromise({ try: () => executor.executeQuery(compiled), catch: storageError }), shape)
    })

  const built = <R>(build: (db: Executor) => Compilable<R>) => (executor: Executor) => build(executor).compile()
  const execute = <R>(build: (db: Executor) => Compilable<R>) => run(built(build), wholeOf)

  const statement = <P extends Record<string, unknown>, R>(
    build: (db: Kysely<Database>, params: P) => Compilable<R>
  ): Statement<P, R> => {
    const bind = compileStatement(db, build)
    return {
      execute: (params) => run(bind(params), wholeOf),
      rows: <B>(params: P, row?: (row: R) => B) =>
        run(bind(params), (result): Array<unknown> => (row === undefined ? result.rows : result.rows.map(row))) as Effect.Effect<
          Array<B>,
          StorageError
        >,
      first: <B>(params: P, row?: (row: R) => B) =>
        run(bind(params), (result): Option.Option<unknown> => (row === undefined ? firstOf(result) : Option.map(firstOf(result), row))) as Effect.Effect<
          Option.Option<B>,
          StorageError
        >,
      affected: (params) => run(bind(params), affectedOf)
    }
  }

  /**
   * Runs `effect` in `scope` (set and restored by hand: the caller is uninterruptible but for the
   * body, and `Effect.locally` cost a dozen operations), then commits or rolls back as `end` says.
   */
  const runIn = <A, E, R>(
    scope: OpenTransaction,
    effect: Effect.Effect<A, E, R>,
    restore: <X, Y, Z>(effect: Effect.Effect<X, Y, Z>) => Effect.Effect<X, Y, Z>,
    end: { readonly commit: Effect.Effect<void, StorageError>; readonly rollback: Effect.Effect<void>; readonly ended: () => void }
  ): Effect.Effect<A, E | StorageError, R> =>
    Effect.flatMap(FiberRef.getAndSet(current, scope), (outside) =>
      Effect.flatMap(Effect.exit(restore(effect)), (exit): Effect.Effect<A, E | StorageError> => {
        end.ended()
        const ending: Effect.Effect<A, E | StorageError> = Exit.isSuccess(exit)
          ? Effect.as(end.commit, exit.value)
          : Effect.zipRight(end.rollback, exit)
        return Effect.zipRight(FiberRef.set(current, outside), ending)
      }))

  /**
   * A synchronous driver with the connection free: begin, run the body and commit in the same
   * steps, so the connection is held only as long as the body runs (usually without yielding), not
   * across event-loop turns.
   */
  const transactionNow = <A, E, R>(executor: SyncExecutor, effect: Effect.Effect<A, E, R>, afterCommit: Array<Effect.Effect<void>>) =>
    Effect.uninterruptibleMask((restore) => {
      let open = true
      return runIn({ executor: executor.joinedDb, isOpen: () => open, afterCommit }, effect, restore, {
        // A failed commit has been rolled back by `commitNow`.
        commit: Effect.try({ try: () => executor.commitNow(), catch: storageError }),
        rollback: Effect.sync(() => executor.rollbackNow()).pipe(Effect.catchAllDefect(() => Effect.void)),
        ended: () => void (open = false)
      })
    })

  const transactionOnKysely = <A, E, R>(effect: Effect.Effect<A, E, R>, afterCommit: Array<Effect.Effect<void>>) =>
    Effect.uninterruptibleMask((restore) =>
      Effect.flatMap(Effect.tryPromise({ try: () => db.startTransaction().execute(), catch: storageError }), (trx) => {
        const rollback = Effect.promise(() => trx.rollback().execute().catch(() => undefined))
        return runIn({ executor: trx, isOpen: () => !trx.isCommitted && !trx.isRolledBack, afterCommit }, effect, restore, {
          commit: Effect.tapError(Effect.tryPromise({ try: () => trx.commit().execute(), catch: storageError }), () => rollback),
          rollback,
          ended: () => undefined
        })
      })
    )

  const query = <A>(run: (db: Executor) => Promise<A>) =>
    Effect.flatMap(FiberRef.get(current), (trx) =>
      Effect.tryPromise({ try: () => run(trx !== undefined ? trx.executor : db), catch: storageError }))

  const transaction = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | StorageError, R> =>
    Effect.flatMap(FiberRef.get(current), (outer) => {
      if (outer !== undefined) return effect
      // What the body registers with `afterCommit` runs once the transaction has committed.
      const committing: Array<Effect.Effect<void>> = []
      const run = sync === undefined
        ? transactionOnKysely(effect, committing)
        : Effect.flatMap(
          Effect.try({ try: () => sync.beginNow(), catch: storageError }),
          (begun) => (begun ? transactionNow(sync, effect, committing) : transactionOnKysely(effect, committing))
        )
      return Effect.flatMap(run, (value) => (committing.length === 0 ? Effect.succeed(value) : Effect.as(runAll(committing), value)))
    })

  // A fiber forked inside a transaction that registers after it ended is too late, as with any store.
  const afterCommit = (effect: Effect.Effect<void>): Effect.Effect<void> =>
    Effect.flatMap(FiberRef.get(current), (trx) =>
      trx !== undefined ? Effect.sync(() => void trx.afterCommit.push(effect)) : effect)

  return {
    dialect,
    db,
    query,
    execute,
    rows: (build) => run(built(build), rowsOf),
    first: (build) => run(built(build), firstOf),
    affected: (build) => run(built(build), affectedOf),
    statement,
    transaction,
    afterCommit,
    storageError: failed
  }
}
