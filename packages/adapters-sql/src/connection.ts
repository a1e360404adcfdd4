import { makeCommitHooks, StorageError } from "@mzk/core"
import { Effect, Exit, FiberRef, Option } from "effect"
import { type CompiledQuery, type Compilable, type Kysely, type QueryResult, sql, type Transaction } from "kysely"
import type { Database, Dialect } from "./schema.js"

export type Executor = Kysely<Database> | Transaction<Database>

/** The NOTIFY channels that wake idle loops in other processes. */
export const WORK_CHANNELS = { proofs: "mzk_proofs", deliveries: "mzk_deliveries" } as const
export type WorkChannel = keyof typeof WORK_CHANNELS

/**
 * One database handle plus the transaction the current fiber is in, if any. Repositories run every
 * query through `query`, so a call made inside `transaction` joins it without being told.
 */
export interface SqlConnection {
  readonly dialect: Dialect
  readonly db: Kysely<Database>
  readonly query: <A>(run: (db: Executor) => Promise<A>) => Effect.Effect<A, StorageError>
  /**
   * Runs one built query and gives Kysely's raw result (`rows`, `numAffectedRows`). Prefer it to
   * `query` for single statements: on a synchronous driver (SQLite) it runs in the same step when
   * the connection is free, without a promise or a fiber suspension.
   */
  readonly execute: <R>(build: (db: Executor) => Compilable<R>) => Effect.Effect<QueryResult<R>, StorageError>
  /** `execute`, then its rows. */
  readonly rows: <R>(build: (db: Executor) => Compilable<R>) => Effect.Effect<Array<R>, StorageError>
  /** `execute`, then its first row, if any. */
  readonly first: <R>(build: (db: Executor) => Compilable<R>) => Effect.Effect<Option.Option<R>, StorageError>
  /** `execute`, then how many rows it inserted, updated or deleted. */
  readonly affected: (build: (db: Executor) => Compilable<unknown>) => Effect.Effect<number, StorageError>
  /**
   * Tells other processes that work was written (Postgres `NOTIFY`; nothing on SQLite, where one
   * process owns the file). Inside a transaction the notice goes out only if and when it commits.
   */
  readonly announce: (channel: WorkChannel) => Effect.Effect<void, StorageError>
  /** Opens a transaction, or joins the current one: also what makes a multi-statement write atomic. */
  readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | StorageError, R>
  /** `Transactor.afterCommit`: after the outermost `transaction` commits, or at once outside one. */
  readonly afterCommit: (effect: Effect.Effect<void>) => Effect.Effect<void>
}

const storageError = (cause: unknown) => new StorageError({ message: "The database did not complete the operation", cause })

/**
 * What a synchronous driver (SQLite) offers besides Kysely's promise-based API: running a query,
 * or a whole transaction, in the caller's step when no one else holds the connection. Each throws
 * what the database throws.
 */
export interface SyncAccess {
  /** The result, or undefined when the query must wait its turn; `joined`: the caller's transaction holds the connection. */
  readonly executeNow: (compiled: CompiledQuery, joined: boolean) => QueryResult<unknown> | undefined
  /** Takes the connection and opens a transaction if it is free; false when it must wait its turn. */
  readonly beginNow: () => boolean
  /** Commits or rolls back what `beginNow` opened and hands the connection on. */
  readonly endNow: (outcome: "commit" | "rollback") => void
  /** A Kysely over the same connection that does not wait for it: for promise-based queries inside `beginNow`'s transaction. */
  readonly joinedDb: Kysely<Database>
}

/** The transaction a fiber is in: what its queries are built and run with, and whether it is still open. */
interface OpenTransaction {
  readonly executor: Executor
  readonly isOpen: () => boolean
}

export const makeSqlConnection = (db: Kysely<Database>, dialect: Dialect, sync?: SyncAccess): SqlConnection => {
  const current = FiberRef.unsafeMake<Option.Option<OpenTransaction>>(Option.none())
  const hooks = makeCommitHooks()

  const execute = <R>(build: (db: Executor) => Compilable<R>): Effect.Effect<QueryResult<R>, StorageError> =>
    Effect.withFiberRuntime((fiber) => {
      const trx = fiber.getFiberRef(current)
      const executor = Option.isSome(trx) ? trx.value.executor : db
      let compiled: CompiledQuery<R>
      try {
        compiled = build(executor).compile()
        // A fiber forked inside a transaction may outlive it: it has joined only while that is open.
        const now = sync?.executeNow(compiled, Option.isSome(trx) && trx.value.isOpen())
        if (now !== undefined) return Effect.succeed(now as QueryResult<R>)
      } catch (cause) {
        return Effect.fail(storageError(cause))
      }
      return Effect.tryPromise({ try: () => executor.executeQuery(compiled), catch: storageError })
    })

  /**
   * SQLite, connection free: begin, run the body and commit in the same steps, so the connection is
   * held only as long as the body runs (usually without yielding), not across event-loop turns.
   */
  const transactionNow = <A, E, R>(access: SyncAccess, effect: Effect.Effect<A, E, R>) =>
    Effect.uninterruptibleMask((restore) =>
      Effect.gen(function*() {
        let open = true
        const scope: OpenTransaction = { executor: access.joinedDb, isOpen: () => open }
        const exit = yield* Effect.exit(restore(Effect.locally(effect, current, Option.some(scope))))
        open = false
        if (Exit.isSuccess(exit)) {
          const committed = yield* Effect.exit(Effect.try({ try: () => access.endNow("commit"), catch: storageError }))
          if (Exit.isSuccess(committed)) return exit.value
          return yield* Effect.failCause(committed.cause)
        }
        yield* Effect.sync(() => access.endNow("rollback")).pipe(Effect.catchAllDefect(() => Effect.void))
        return yield* exit
      })
    )

  const transactionOnKysely = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.uninterruptibleMask((restore) =>
      Effect.gen(function*() {
        const trx = yield* Effect.tryPromise({ try: () => db.startTransaction().execute(), catch: storageError })
        const scope: OpenTransaction = { executor: trx, isOpen: () => !trx.isCommitted && !trx.isRolledBack }
        const exit = yield* Effect.exit(restore(Effect.locally(effect, current, Option.some(scope))))
        if (Exit.isSuccess(exit)) {
          const committed = yield* Effect.exit(Effect.tryPromise({ try: () => trx.commit().execute(), catch: storageError }))
          if (Exit.isSuccess(committed)) return exit.value
          yield* Effect.promise(() => trx.rollback().execute().catch(() => undefined))
          return yield* Effect.failCause(committed.cause)
        }
        yield* Effect.promise(() => trx.rollback().execute().catch(() => undefined))
        return yield* exit
      })
    )

  const query = <A>(run: (db: Executor) => Promise<A>) =>
    Effect.flatMap(FiberRef.get(current), (trx) =>
      Effect.tryPromise({ try: () => run(Option.isSome(trx) ? trx.value.executor : db), catch: storageError }))

  const transaction = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | StorageError, R> =>
    Effect.flatMap(FiberRef.get(current), (outer) => {
      if (Option.isSome(outer)) return effect
      if (sync === undefined) return hooks.collect(transactionOnKysely(effect))
      return hooks.collect(Effect.flatMap(
        Effect.try({ try: () => sync.beginNow(), catch: storageError }),
        (begun) => (begun ? transactionNow(sync, effect) : transactionOnKysely(effect))
      ))
    })

  const announce = (channel: WorkChannel) =>
    dialect === "postgres"
      ? Effect.asVoid(query((db) => sql`select pg_notify(${WORK_CHANNELS[channel]}, '')`.execute(db)))
      : Effect.void

  return {
    dialect,
    db,
    query,
    execute,
    rows: (build) => Effect.map(execute(build), (result) => result.rows),
    first: (build) => Effect.map(execute(build), (result) => Option.fromNullable(result.rows[0])),
    affected: (build) => Effect.map(execute(build), (result) => Number(result.numAffectedRows ?? 0n)),
    transaction,
    announce,
    afterCommit: hooks.afterCommit
  }
}
