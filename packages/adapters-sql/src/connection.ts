import { StorageError } from "@mzk/core"
import { Effect, Exit, FiberRef, Option } from "effect"
import { type CompiledQuery, type Compilable, type Kysely, type QueryResult, sql, type Transaction } from "kysely"
import type { Database, Dialect } from "./schema.js"

export type Executor = Kysely<Database> | Transaction<Database>

/** The NOTIFY channels that wake idle loops in other processes. */
export const WORK_CHANNELS = { proofs: "mzk_proofs", deliveries: "mzk_deliveries" } as const
export type WorkChannel = keyof typeof WORK_CHANNELS

/**
 * A statement built with Kysely once, from named placeholders, and run many times with values:
 * what the repositories use for the queries every request makes, so a request pays neither
 * Kysely's builder nor its compiler (about 9 µs a query in the server, measured).
 */
export interface Statement<P, R> {
  readonly execute: (params: P) => Effect.Effect<QueryResult<R>, StorageError>
  /** The rows, each through `row` if given (in the same step as the query). */
  readonly rows: <B = R>(params: P, row?: (row: R) => B) => Effect.Effect<Array<B>, StorageError>
  /** The first row, if any, through `row` if given. */
  readonly first: <B = R>(params: P, row?: (row: R) => B) => Effect.Effect<Option.Option<B>, StorageError>
  readonly affected: (params: P) => Effect.Effect<number, StorageError>
}

/**
 * Stands in for one named value while a statement is built. The values a statement takes must be
 * scalars placed where Kysely makes a parameter (`where`, `set`, `values`, `limit`): a placeholder
 * cannot change the SQL, so a list for `in`, an optional filter or arithmetic on a value need a
 * query built per call instead. Arithmetic or string use fails loudly rather than compiling wrong.
 */
class Placeholder {
  constructor(readonly name: string) {}
  [Symbol.toPrimitive](): never {
    throw new Error(`Statement parameter ${this.name} is a placeholder: compute values before passing them in`)
  }
}

const placeholders = new Proxy({}, { get: (_, name) => new Placeholder(String(name)) })

/** Where each compiled parameter comes from: a named value, or a constant of the statement. */
type Slot = { readonly name: string } | { readonly value: unknown }

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
   * Compiles `build` once, with placeholders for the named values of `P`, into a `Statement` whose
   * runs only bind values (see `Placeholder` for what a statement may take).
   */
  readonly statement: <P extends Record<string, unknown>, R>(
    build: (db: Kysely<Database>, params: P) => Compilable<R>
  ) => Statement<P, R>
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

// What `execute`, `rows`, `first` and `affected` take from a result, for built queries and statements alike.
const wholeOf = <R>(result: QueryResult<R>) => result
const rowsOf = <R>(result: QueryResult<R>) => result.rows
const firstOf = <R>(result: QueryResult<R>) => Option.fromNullable(result.rows[0])
const affectedOf = (result: QueryResult<unknown>) => Number(result.numAffectedRows ?? 0n)

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

export const makeSqlConnection = (db: Kysely<Database>, dialect: Dialect, sync?: SyncAccess): SqlConnection => {
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
        now = sync?.executeNow(compiled, trx !== undefined && trx.isOpen())
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
    // The SQL is the same on the root handle and in a transaction; only where it runs differs.
    const template = build(db, placeholders as P).compile()
    const slots: ReadonlyArray<Slot> = template.parameters.map((value) =>
      value instanceof Placeholder ? { name: value.name } : { value }
    )
    const bind = (params: P) => (): CompiledQuery<R> => {
      const parameters = new Array<unknown>(slots.length)
      for (let i = 0; i < slots.length; i++) {
        const slot = slots[i]!
        parameters[i] = "name" in slot ? params[slot.name] : slot.value
      }
      return { ...template, parameters }
    }
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
   * SQLite, connection free: begin, run the body and commit in the same steps, so the connection is
   * held only as long as the body runs (usually without yielding), not across event-loop turns.
   */
  const transactionNow = <A, E, R>(access: SyncAccess, effect: Effect.Effect<A, E, R>, afterCommit: Array<Effect.Effect<void>>) =>
    Effect.uninterruptibleMask((restore) => {
      let open = true
      return runIn({ executor: access.joinedDb, isOpen: () => open, afterCommit }, effect, restore, {
        // A failed commit has been rolled back by `endNow`.
        commit: Effect.try({ try: () => access.endNow("commit"), catch: storageError }),
        rollback: Effect.sync(() => access.endNow("rollback")).pipe(Effect.catchAllDefect(() => Effect.void)),
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

  const announce = (channel: WorkChannel) =>
    dialect === "postgres"
      ? Effect.asVoid(query((db) => sql`select pg_notify(${WORK_CHANNELS[channel]}, '')`.execute(db)))
      : Effect.void

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
    announce,
    afterCommit
  }
}
