import { HelpDoc, Options, ValidationError } from "@effect/cli"
import { Cause, Data, Effect } from "effect"
import { nearest } from "./settings.js"

/** A mistake on the command line (or in the environment or config file): exit code 2. */
export class UsageError extends Data.TaggedError("UsageError")<{
  readonly message: string
  /** Where to read more; default: the command's `--help`. */
  readonly hint?: string
}> {}

/** A command that ran and failed, already said in one line: exit code 1. */
export class CommandFailed extends Data.TaggedError("CommandFailed")<{ readonly message: string }> {}

export interface Failure {
  /**
   * For a person: one line per mistake (`mzk: …`), the last one saying where to read more; a
   * command that failed is one line, its cause and what to do about it.
   */
  readonly text: string
  readonly code: 1 | 2
}

const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*[A-Za-z]`, "g")
export const stripAnsi = (text: string) => text.replace(ANSI, "")
const linesOf = (text: string) => stripAnsi(text).split("\n").map((line) => line.trim()).filter((line) => line !== "")
const oneLine = (text: string) => linesOf(text).join(" ")

/** A word of the command line that names no command or flag where one is expected, and what it could have been. */
export interface Mistyped {
  readonly kind: "command" | "flag"
  readonly word: string
  readonly choices: ReadonlyArray<string>
}

/**
 * An unknown command or flag, said one way for both (and for subcommands): the word as typed, the
 * nearest name there is, then where to read more. Names of commands and flags are not quoted, as
 * everywhere else in mzk's messages; values are.
 */
const unknownName = (
  kind: Mistyped["kind"],
  word: string,
  choices: ReadonlyArray<string>,
  hint: string,
  named: (word: string) => string = (word) => word
) => {
  const near = nearest(word, choices)
  return `mzk: unknown ${kind} ${named(word)}${near === undefined ? "" : `: did you mean ${named(near)}?`} (${hint})`
}

/** A flag given a value outside its choices, said the same way for every flag. */
export const notOneOf = (flag: string, value: string, values: ReadonlyArray<string>) =>
  `--${flag}: ${JSON.stringify(value)} is not one of ${values.join(", ")}`

/**
 * A flag that takes one of `values`. Not `Options.choice`, whose refusal names neither the flag nor
 * the value ("Expected one of the following cases: …").
 */
export const choiceOption = <const L extends string>(flag: string, values: ReadonlyArray<L>): Options.Options<L> =>
  Options.text(flag).pipe(
    Options.withPseudoName(values.join("|")),
    Options.mapEffect((value) =>
      (values as ReadonlyArray<string>).includes(value)
        ? Effect.succeed(value as L)
        : Effect.fail(ValidationError.invalidValue(HelpDoc.p(notOneOf(flag, value, values)))))
  )

/** @effect/cli's own sentences ("The flag '--nme' is not recognized. Did you mean '--name'?") in mzk's words. */
const inOwnWords = (line: string) =>
  line
    .replace(/^The flag '(--[^']+)' is not recognized\. Did you mean '(--[^']+)'\?$/, "unknown flag $1: did you mean $2?")
    .replace(/^Expected to find option: '(--[^']+)'$/, "$1 is required")
    .replace(/^Path '(.*)' must exist$/, "$1 does not exist")

interface NodeishError {
  readonly message?: unknown
  readonly code?: unknown
  readonly syscall?: unknown
  readonly address?: unknown
  readonly port?: unknown
  readonly cause?: unknown
  readonly errors?: unknown
}

/** The error and every error under it (`cause`, an AggregateError's `errors`), outermost first. */
const chain = (error: unknown): Array<NodeishError> => {
  const seen: Array<NodeishError> = []
  const visit = (e: unknown) => {
    if (typeof e !== "object" || e === null || seen.includes(e as NodeishError) || seen.length > 20) return
    const node = e as NodeishError
    seen.push(node)
    visit(node.cause)
    if (Array.isArray(node.errors)) node.errors.forEach(visit)
  }
  visit(error)
  return seen
}

const codeOf = (errors: ReadonlyArray<NodeishError>) => errors.map((e) => e.code).find((code): code is string => typeof code === "string")
const messageOf = (error: NodeishError | undefined) => (typeof error?.message === "string" ? error.message : "")

const SQLITE_REASONS: Record<string, string> = {
  ENOTDIR: "a part of the path is a file, not a folder",
  EEXIST: "a part of the path is a file, not a folder",
  EACCES: "permission denied",
  EPERM: "permission denied",
  EROFS: "the file system is read-only",
  EISDIR: "the path is a folder",
  SQLITE_CANTOPEN: "the file cannot be opened or created",
  SQLITE_NOTADB: "the file is not a SQLite database",
  SQLITE_READONLY: "the file is read-only",
  SQLITE_CORRUPT: "the database file is corrupt"
}

const POSTGRES_REASONS: Record<string, string> = {
  ECONNREFUSED: "connection refused: is PostgreSQL running on that host and port?",
  ENOTFOUND: "unknown host",
  EAI_AGAIN: "the host name could not be resolved",
  ETIMEDOUT: "the connection timed out",
  EHOSTUNREACH: "the host is unreachable",
  ECONNRESET: "the connection was reset",
  "28P01": "password authentication failed",
  "28000": "the server refused this user",
  "3D000": "the database does not exist",
  NO_TLS: "the server does not take TLS connections: remove sslmode from the URL, or turn ssl on in the server",
  ERR_INVALID_URL: "the URL is malformed"
}

/**
 * What went wrong, as one line, and the exit code. `command` is the command's path (`serve`, `keys
 * create`) for help hints; `flags` are that command's flags (`--port`), for "did you mean".
 */
export const describeFailure = (
  cause: Cause.Cause<unknown>,
  command: string,
  flags: ReadonlyArray<string> = [],
  mistyped?: Mistyped
): Failure => {
  const error = Cause.squash(cause)
  const help = `mzk ${command === "" ? "" : `${command} `}--help shows the usage`
  if (ValidationError.isValidationError(error)) {
    const lines = "error" in error ? linesOf(HelpDoc.toAnsiText(error.error)).map(inOwnWords) : ["invalid command line"]
    const text = lines.join(" ")
    // @effect/cli names the top level's commands whatever level the mistake is at, and takes a flag
    // before any command for a command: name this level's.
    if (mistyped !== undefined && /invalid subcommand/i.test(text)) {
      if (mistyped.kind === "flag") return { text: unknownName("flag", mistyped.word, mistyped.choices, help), code: 2 }
      const at = (word: string) => (command === "" ? word : `${command} ${word}`)
      return {
        text: unknownName("command", mistyped.word, mistyped.choices, `${command === "" ? "mzk" : `mzk ${command}`} takes ${mistyped.choices.join(", ")}; ${help}`, at),
        code: 2
      }
    }
    const unknown = /unknown argument: '(--[^'=]+)/.exec(text)?.[1]
    if (unknown !== undefined) return { text: unknownName("flag", unknown, flags, help), code: 2 }
    // Each mistake on its own line; the command's help named once, after the last.
    return { text: lines.map((line, i) => `mzk: ${line}${i === lines.length - 1 ? ` (${help})` : ""}`).join("\n"), code: 2 }
  }
  if (error instanceof UsageError) return { text: `mzk: ${error.message} (${error.hint ?? help})`, code: 2 }
  if (error instanceof CommandFailed) return { text: `mzk: ${error.message}`, code: 1 }
  const errors = chain(error)
  const code = codeOf(errors)
  const top = messageOf(errors[0])
  const listen = errors.find((e) => e.syscall === "listen")
  if (listen !== undefined || messageOf(errors[0]).startsWith("ServeError")) {
    const where = `${String(listen?.address ?? "the address")}:${String(listen?.port ?? "")}`
    if (code === "EADDRINUSE") {
      return { text: `mzk: port ${String(listen?.port)} on ${String(listen?.address)} is already in use: stop the process that holds it, or choose another port with --port (MZK_PORT)`, code: 1 }
    }
    if (code === "EACCES") return { text: `mzk: not allowed to listen on ${where} (ports below 1024 need privileges): choose another port with --port (MZK_PORT)`, code: 1 }
    if (code === "EADDRNOTAVAIL") return { text: `mzk: ${String(listen?.address)} is not an address of this machine: choose another with --host (MZK_HOST), e.g. 127.0.0.1 or 0.0.0.0`, code: 1 }
  }
  if (top.startsWith("Cannot open the SQLite database")) {
    const file = top.slice("Cannot open the SQLite database ".length)
    const reason = (code !== undefined ? SQLITE_REASONS[code] : undefined) ?? (oneLine(messageOf(errors[1])) || "unknown reason")
    return { text: `mzk: cannot open the SQLite database ${file} (${reason}): check the path and its folder's permissions, or choose another with --database (MZK_DATABASE_URL)`, code: 1 }
  }
  if (top.startsWith("Cannot connect to PostgreSQL")) {
    const invalidUrl = errors.some((e) => /invalid url/i.test(messageOf(e)))
    if (errors.some((e) => /does not support SSL/i.test(messageOf(e)))) {
      return { text: `mzk: cannot connect to the PostgreSQL database (${POSTGRES_REASONS.NO_TLS}) (--database, MZK_DATABASE_URL)`, code: 1 }
    }
    const reason = (invalidUrl ? POSTGRES_REASONS.ERR_INVALID_URL : code !== undefined ? POSTGRES_REASONS[code] : undefined) ??
      (oneLine(messageOf(errors[errors.length - 1])) || "unknown reason")
    return { text: `mzk: cannot connect to the PostgreSQL database (${reason}): check the URL's host, port, user, password and database name (--database, MZK_DATABASE_URL)`, code: 1 }
  }
  const tag = typeof (error as { _tag?: unknown })._tag === "string" ? (error as { _tag: string })._tag : undefined
  const below = errors.slice(1).map(messageOf).filter((m) => m !== "" && !top.includes(m))
  const message = oneLine([top || String(error), ...below].join(": "))
  // Errors that already speak to people (a bad ptau, a prover that cannot start) are shown as they are.
  const known = tag === "PtauError" || tag === "ProverStartupError"
  return { text: `mzk: ${message}${known ? "" : " (--log-level debug prints the details)"}`, code: 1 }
}
