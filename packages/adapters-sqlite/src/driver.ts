import type SqliteDatabase from "better-sqlite3"
import type { CompiledQuery, DatabaseConnection, Driver, QueryResult } from "kysely"
import type { DatabaseFile } from "./databaseFile.js"
import { BEGIN, COMMIT, ROLLBACK } from "./transactionStatements.js"
import { TurnLock } from "./turnLock.js"

const STATEMENT_CACHE_SIZE = 256

/**
 * Kysely builds the same few statements over and over; preparing one costs more than running it.
 * SQLite re-prepares a cached statement by itself when the schema changes.
 */
class BetterSqliteConnection implements DatabaseConnection {
  readonly #database: SqliteDatabase.Database
  readonly #file: DatabaseFile | undefined
  readonly #statements = new Map<string, SqliteDatabase.Statement>()

  constructor(database: SqliteDatabase.Database, file: DatabaseFile | undefined) {
    this.#database = database
    this.#file = file
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
    // A write outside a transaction, or the `begin immediate` of one (not read-only: it takes the
    // write lock), goes ahead only on the file the connection opened, while it can be written.
    if (this.#file !== undefined && !statement.readonly && !this.#database.inTransaction) this.#file.checkWritable()
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

/**
 * Kysely's driver over the one better-sqlite3 connection, with a fair hand-over (`TurnLock`), and
 * the synchronous path that `SyncExecutor` (see kyselyDialect.ts) offers the SQL connection.
 */
export class BetterSqliteDriver implements Driver {
  readonly #database: SqliteDatabase.Database
  readonly #connection: BetterSqliteConnection
  readonly #lock = new TurnLock()

  constructor(database: SqliteDatabase.Database, file?: DatabaseFile) {
    this.#database = database
    this.#connection = new BetterSqliteConnection(database, file)
  }

  async init(): Promise<void> {}

  /**
   * better-sqlite3 is synchronous: a query can run in its caller's step when no one holds the
   * connection, or when the caller's own transaction does. Otherwise it waits its turn (undefined).
   */
  runNow<R>(compiled: CompiledQuery, joined: boolean): QueryResult<R> | undefined {
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

  commitNow(): void {
    try {
      this.#connection.executeSync(COMMIT)
    } catch (error) {
      // A failed commit leaves the transaction open: undo it before anyone else gets the connection.
      try {
        this.#connection.executeSync(ROLLBACK)
      } catch {
        // Already rolled back by SQLite.
      }
      throw error
    } finally {
      this.#lock.release()
    }
  }

  rollbackNow(): void {
    try {
      this.#connection.executeSync(ROLLBACK)
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
