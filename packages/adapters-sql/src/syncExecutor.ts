import type { CompiledQuery, Kysely, QueryResult } from "kysely"
import type { Database } from "./schema.js"

/**
 * What a synchronous driver offers besides Kysely's promise-based API, for `makeSqlConnection`:
 * running a query, or a whole transaction, in the caller's step when no one else holds the
 * connection, so the connection is not held across event-loop turns while others wait for it.
 * Each method throws what the database throws.
 */
export interface SyncExecutor {
  /**
   * Runs `compiled` now and gives its result, or undefined when another holds the connection and
   * the query must wait its turn. `joined`: the caller's own transaction holds it.
   */
  readonly runNow: (compiled: CompiledQuery, joined: boolean) => QueryResult<unknown> | undefined
  /** Takes the connection and begins a transaction if the connection is free; false when it must wait its turn. */
  readonly beginNow: () => boolean
  /** Commits what `beginNow` began (rolling it back if the commit fails) and hands the connection on. */
  readonly commitNow: () => void
  /** Rolls back what `beginNow` began and hands the connection on. */
  readonly rollbackNow: () => void
  /** A Kysely over the same connection that does not wait for it: for promise-based queries inside `beginNow`'s transaction. */
  readonly joinedDb: Kysely<Database>
}
