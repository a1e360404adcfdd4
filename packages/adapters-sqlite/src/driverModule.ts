import { StorageError } from "@mzk/core"
import type SqliteDatabase from "better-sqlite3"
import { Effect } from "effect"

/** The app installs better-sqlite3 itself, as with Kysely's or Drizzle's SQLite: see the README. */
export const INSTALL_BETTER_SQLITE = "npm install better-sqlite3@12"

const isMissing = (cause: unknown, specifier: string): boolean =>
  typeof cause === "object" && cause !== null && "code" in cause &&
  (cause.code === "ERR_MODULE_NOT_FOUND" || cause.code === "MODULE_NOT_FOUND") &&
  String((cause as { message?: unknown }).message).includes(`'${specifier}'`)

/**
 * better-sqlite3, read when the first SQLite database opens rather than when this package is
 * imported: it is an optional peer (a native module that compiles SQLite where its prebuilt binary
 * cannot be downloaded), so an application on PostgreSQL never needs it. Missing, or built for
 * another Node.js, it fails with what to run.
 */
export const loadBetterSqlite: Effect.Effect<typeof SqliteDatabase, StorageError> = Effect.tryPromise({
  try: () => import("better-sqlite3").then((module) => module.default),
  catch: (cause) =>
    new StorageError({
      message: isMissing(cause, "better-sqlite3")
        ? `SQLite storage needs the better-sqlite3 package, which is not installed: run \`${INSTALL_BETTER_SQLITE}\` in your application, or use a PostgreSQL database (postgres://…)`
        : `better-sqlite3 is installed but cannot be loaded (${cause instanceof Error ? cause.message.split("\n")[0] : String(cause)}): reinstall it for this Node.js (npm rebuild better-sqlite3)`,
      cause
    })
})
