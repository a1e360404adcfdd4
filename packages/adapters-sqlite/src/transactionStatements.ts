import { CompiledQuery } from "kysely"

/**
 * The transaction statements, built once: a synchronous transaction runs two of them per request.
 * Every transaction on the connection, synchronous or through Kysely, begins with `BEGIN` here.
 *
 * Transactions begin IMMEDIATE, taking the write lock (waiting up to the busy timeout) before their
 * first read. mzk's transactions read, then write; begun deferred, one whose snapshot another
 * process's commit had outdated could not upgrade to writing and failed at once with "database is
 * locked", which no busy timeout retries (SQLITE_BUSY_SNAPSHOT in WAL mode).
 */
export const BEGIN = CompiledQuery.raw("begin immediate")
export const COMMIT = CompiledQuery.raw("commit")
export const ROLLBACK = CompiledQuery.raw("rollback")
