import { makeCommitHooks, StorageError } from "@mzk/core"
import { Effect, Exit, FiberRef, Option } from "effect"
import { type CompiledQuery, type Compilable, type ControlledTransaction, type Kysely, type QueryResult, sql, type Transaction } from "kysely"
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
 * A synchronous driver's way to run a query in the caller's step: the result, or undefined when
 * the query must wait for the connection (another fiber's transaction holds it). `joined` says the
 * caller's own transaction holds it. Throws what the database throws.
 */
export type ExecuteNow = (compiled: CompiledQuery, joined: boolean) => QueryResult<unknown> | undefined

export const makeSqlConnection = (db: Kysely<Database>, dialect: Dialect, executeNow?: ExecuteNow): SqlConnection => {
  const current = FiberRef.unsafeMake<Option.Option<ControlledTransaction<Database>>>(Option.none())
  const hooks = makeCommitHooks()

  const execute = <R>(build: (db: Executor) => Compilable<R>): Effect.Effect<QueryResult<R>, StorageError> =>
    Effect.withFiberRuntime((fiber) => {
      const trx = fiber.getFiberRef(current)
      const executor = Option.getOrElse(trx, () => db)
      let compiled: CompiledQuery<R>
      try {
        compiled = build(executor).compile()
        // A fiber forked inside a transaction may outlive it: it has joined only while that is open.
        const joined = Option.isSome(trx) && !trx.value.isCommitted && !trx.value.isRolledBack
        const now = executeNow?.(compiled, joined)
        if (now !== undefined) return Effect.succeed(now as QueryResult<R>)
      } catch (cause) {
        return Effect.fail(storageError(cause))
      }
      return Effect.tryPromise({ try: () => executor.executeQuery(compiled), catch: storageError })
    })

  const query = <A>(run: (db: Executor) => Promise<A>) =>
    Effect.flatMap(FiberRef.get(current), (trx) =>
      Effect.tryPromise({ try: () => run(Option.getOrElse(trx, () => db)), catch: storageError }))

  const transaction = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | StorageError, R> =>
    Effect.flatMap(FiberRef.get(current), (outer) =>
      Option.isSome(outer)
        ? effect
        : hooks.collect(Effect.uninterruptibleMask((restore) =>
          Effect.gen(function*() {
            const trx = yield* Effect.tryPromise({ try: () => db.startTransaction().execute(), catch: storageError })
            const exit = yield* Effect.exit(restore(Effect.locally(effect, current, Option.some(trx))))
            if (Exit.isSuccess(exit)) {
              const committed = yield* Effect.exit(Effect.tryPromise({ try: () => trx.commit().execute(), catch: storageError }))
              if (Exit.isSuccess(committed)) return exit.value
              yield* Effect.promise(() => trx.rollback().execute().catch(() => undefined))
              return yield* Effect.failCause(committed.cause)
            }
            yield* Effect.promise(() => trx.rollback().execute().catch(() => undefined))
            return yield* exit
          })
        )))

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
