import type { Database, SyncExecutor } from "@mzk/adapters-sql"
import type SqliteDatabase from "better-sqlite3"
import { type Dialect, type Driver, Kysely, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler } from "kysely"
import type { DatabaseFile } from "./databaseFile.js"
import { BetterSqliteDriver } from "./driver.js"

/**
 * Kysely's SQLite dialect over one better-sqlite3 handle, with a fair connection hand-over and a
 * prepared-statement cache. Savepoints (nested Kysely transactions) are not offered: mzk joins an
 * outer transaction instead of nesting.
 */
export class BetterSqliteDialect implements Dialect {
  readonly #driver: BetterSqliteDriver

  /** `file`: the database's file, checked before each write (see `DatabaseFile`); none for `:memory:`. */
  constructor(database: SqliteDatabase.Database, file?: DatabaseFile) {
    this.#driver = new BetterSqliteDriver(database, file)
  }

  /** For `makeSqlConnection`: queries and transactions in the caller's step when the connection is free. */
  syncExecutor(): SyncExecutor {
    const driver = this.#driver
    const joinedDialect: Dialect = { ...dialectParts, createDriver: () => driver.joined }
    return {
      runNow: (compiled, joined) => driver.runNow(compiled, joined),
      beginNow: () => driver.beginNow(),
      commitNow: () => driver.commitNow(),
      rollbackNow: () => driver.rollbackNow(),
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
