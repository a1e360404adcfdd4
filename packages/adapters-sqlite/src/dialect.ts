import type SqliteDatabase from "better-sqlite3"
import {
  CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  Kysely,
  type QueryResult,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler
} from "kysely"
import type { Database, SyncAccess } from "@mzk/adapters-sql"

const STATEMENT_CACHE_SIZE = 256

/**
 * The transaction statements, built once: a synchronous transaction runs two of them per request.
 * Transactions begin IMMEDIATE, taking the write lock (waiting up to the busy timeout) before their
 * first read. mzk's transactions read, then write; begun deferred, one whose snapshot another
 * process's commit had outdated could not upgrade to writing and failed at once with "database is
 * locked", which no busy timeout retries (SQLITE_BUSY_SNAPSHOT in WAL mode).
 */
const BEGIN = CompiledQuery.raw("begin immediate")
const COMMIT = CompiledQuery.raw("commit")
const ROLLBACK = CompiledQuery.raw("rollback")

/**
 * SQLite has one connection, so queries and transactions take turns. Kysely's own SQLite driver
 * wakes every waiter on each release and all but one go back to sleep: with 32 requests in flight
 * that is 32 wake-ups per query (about 9% of an authenticated request's throughput, measured). This
 * lock hands the connection to the longest waiter only, in arrival order.
 */
class TurnLock {
  #held = false

  get held(): boolean {
    return this.#held
  }
  readonly #waiting: Array<() => void> = []

  /** Takes the lock if it is free, at once; false when someone holds it. */
  tryAcquire(): boolean {
    if (this.#held) return false
    this.#held = true
    return true
  }

  acquire(): Promise<void> {
    if (!this.#held) {
      this.#held = true
      return Promise.resolve()
    }
    return new Promise((resolve) => this.#waiting.push(resolve))
  }

  release(): void {
    const next = this.#waiting.shift()
    if (next === undefined) this.#held = false
    else next()
  }
}

/**
 * Kysely builds the same few statements over and over; preparing one costs more than running it.
 * SQLite re-prepares a cached statement by itself when the schema changes.
 */
class BetterSqliteConnection implements DatabaseConnection {
  readonly #database: SqliteDatabase.Database
  readonly #statements = new Map<string, SqliteDatabase.Statement>()

  constructor(database: SqliteDatabase.Database) {
    this.#database = database
  }

  #prepare(sql: string): SqliteDatabase.Statement {
    let statement = this.#statements.get(sql)
    if (statement === undefined) {
      if (this.#statements.size >= STATEMENT_CACHE_SIZE) this.#statements.clear()
      statement = this.#database.prepare(sql)
      this.#statements.set(sql, statement)
    }
    return statement
  }

  executeSync<R>(compiled: CompiledQuery): QueryResult<R> {
    const statement = this.#prepare(compiled.sql)
    const parameters = compiled.parameters as Array<unknown>
    if (statement.reader) return { rows: statement.all(parameters) as Array<R> }
    const { changes, lastInsertRowid } = statement.run(parameters)
    return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] }
  }

  executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    try {
      return Promise.resolve(this.executeSync<R>(compiled))
    } catch (error) {
      return Promise.reject(error)
    }
  }

  async *streamQuery<R>(compiled: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    for (const row of this.#prepare(compiled.sql).iterate(compiled.parameters as Array<unknown>)) {
      yield { rows: [row as R] }
    }
  }
}

class BetterSqliteDriver implements Driver {
  readonly #database: SqliteDatabase.Database
  readonly #connection: BetterSqliteConnection
  readonly #lock = new TurnLock()

  constructor(database: SqliteDatabase.Database) {
    this.#database = database
    this.#connection = new BetterSqliteConnection(database)
  }

  async init(): Promise<void> {}

  /**
   * better-sqlite3 is synchronous: a query can run in its caller's step when no one holds the
   * connection, or when the caller's own transaction does. Otherwise it waits its turn (undefined).
   */
  executeNow<R>(compiled: CompiledQuery, joined: boolean): QueryResult<R> | undefined {
    if (!joined && this.#lock.held) return undefined
    return this.#connection.executeSync<R>(compiled)
  }

  beginNow(): boolean {
    if (!this.#lock.tryAcquire()) return false
    try {
      this.#connection.executeSync(BEGIN)
      return true
    } catch (error) {
      this.#lock.release()
      throw error
    }
  }

  endNow(outcome: "commit" | "rollback"): void {
    try {
      this.#connection.executeSync(outcome === "commit" ? COMMIT : ROLLBACK)
    } catch (error) {
      // A failed commit leaves the transaction open: undo it before anyone else gets the connection.
      if (outcome === "commit") {
        try {
          this.#connection.executeSync(ROLLBACK)
        } catch {
          // Already rolled back by SQLite.
        }
      }
      throw error
    } finally {
      this.#lock.release()
    }
  }

  /** The connection without the lock, for queries of a transaction `beginNow` opened (which holds it). */
  get joined(): Driver {
    const connection = this.#connection
    return {
      init: async () => {},
      acquireConnection: async () => connection,
      releaseConnection: async () => {},
      beginTransaction: () => Promise.reject(new Error("Nested transactions are not offered: join the outer one")),
      commitTransaction: () => Promise.reject(new Error("Nested transactions are not offered: join the outer one")),
      rollbackTransaction: () => Promise.reject(new Error("Nested transactions are not offered: join the outer one")),
      destroy: async () => {}
    }
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    await this.#lock.acquire()
    return this.#connection
  }

  async releaseConnection(): Promise<void> {
    this.#lock.release()
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(BEGIN)
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(COMMIT)
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(ROLLBACK)
  }

  async destroy(): Promise<void> {
    this.#database.close()
  }
}

/**
 * Kysely's SQLite dialect over one better-sqlite3 handle, with a fair connection hand-over and a
 * prepared-statement cache. Savepoints (nested Kysely transactions) are not offered: mzk joins an
 * outer transaction instead of nesting.
 */
export class BetterSqliteDialect implements Dialect {
  readonly #driver: BetterSqliteDriver

  constructor(database: SqliteDatabase.Database) {
    this.#driver = new BetterSqliteDriver(database)
  }

  /** For `makeSqlConnection`: queries and transactions in the caller's step when the connection is free. */
  syncAccess(): SyncAccess {
    const driver = this.#driver
    const joinedDialect: Dialect = { ...dialectParts, createDriver: () => driver.joined }
    return {
      executeNow: (compiled, joined) => driver.executeNow(compiled, joined),
      beginNow: () => driver.beginNow(),
      endNow: (outcome) => driver.endNow(outcome),
      joinedDb: new Kysely<Database>({ dialect: joinedDialect })
    }
  }

  createDriver(): Driver {
    return this.#driver
  }

  createQueryCompiler() {
    return dialectParts.createQueryCompiler()
  }

  createAdapter() {
    return dialectParts.createAdapter()
  }

  createIntrospector(db: Kysely<unknown>) {
    return dialectParts.createIntrospector(db)
  }
}

const dialectParts = {
  createQueryCompiler: () => new SqliteQueryCompiler(),
  createAdapter: () => new SqliteAdapter(),
  createIntrospector: (db: Kysely<unknown>) => new SqliteIntrospector(db)
}
