import { accessSync, constants, statSync } from "node:fs"
import { resolve } from "node:path"

/**
 * Why a write was refused before SQLite saw it: the database file is no longer the one the
 * connection opened, or cannot be written. `code` is the system's (`EPERM`, `ENOENT`…) where it
 * gave one.
 */
export class DatabaseFileFault extends Error {
  override readonly name = "DatabaseFileFault"
  constructor(
    readonly fault: "replaced" | "not_writable",
    message: string,
    readonly code: string | undefined
  ) {
    super(message)
  }
}

const codeOf = (error: unknown) =>
  typeof error === "object" && error !== null && "code" in error && typeof error.code === "string" ? error.code : undefined

/**
 * The file the connection opened, checked before each write transaction (two system calls, a few
 * µs). SQLite keeps writing to a file deleted or replaced under it, into an inode nothing will
 * open again, and writes into its write-ahead log while the database file itself is read-only
 * (its checkpoints then fail without a word and the log grows without end); mzk refuses the
 * write instead, so the client gets a 503 it can retry rather than a success that is lost.
 */
export class DatabaseFile {
  readonly #path: string
  readonly #dev: number
  readonly #ino: number

  constructor(path: string) {
    // Absolute, as SQLite holds it: the process's working folder may change after the open.
    this.#path = resolve(path)
    const opened = statSync(this.#path)
    this.#dev = opened.dev
    this.#ino = opened.ino
  }

  /** Throws a `DatabaseFileFault` when a write must not go ahead. */
  checkWritable(): void {
    let now
    try {
      now = statSync(this.#path)
    } catch (error) {
      throw new DatabaseFileFault("replaced", error instanceof Error ? error.message : String(error), codeOf(error))
    }
    if (now.ino !== this.#ino || now.dev !== this.#dev) {
      throw new DatabaseFileFault("replaced", `the file at the path is inode ${now.ino} of device ${now.dev}; the open one is inode ${this.#ino} of device ${this.#dev}`, undefined)
    }
    try {
      // EROFS (a read-only mount) and EPERM (an immutable file) hold for root too; chmod does not.
      accessSync(this.#path, constants.W_OK)
    } catch (error) {
      throw new DatabaseFileFault("not_writable", error instanceof Error ? error.message : String(error), codeOf(error))
    }
  }
}

const NOT_WRITABLE: Readonly<Record<string, string>> = {
  EROFS: "the file system is read-only",
  EPERM: "the file is immutable, or the system refuses writes to it",
  EACCES: "its permissions do not let this process write it"
}

/** The sentence of a `DatabaseFileFault`, for `SqlDialect.describeFailure`. */
export const describeFileFault = (fault: DatabaseFileFault): string =>
  fault.fault === "replaced"
    ? "the database file was replaced or deleted since mzk opened it; restart mzk to open the file now at its path"
    : `the database file cannot be written (${fault.code ?? "unknown"}${fault.code !== undefined && NOT_WRITABLE[fault.code] !== undefined ? `: ${NOT_WRITABLE[fault.code]}` : ""})`
