import { Either, LogLevel } from "effect"
import { notOneOf } from "./failures.js"

/**
 * The options every command takes, wherever they stand on the line: taken out of the arguments
 * before @effect/cli parses them (it only knows options at the level of the command they belong
 * to), so `mzk serve --port 1 --log-level debug` and `mzk --log-level debug serve` are the same.
 */
export interface Globals {
  readonly logLevel: LogLevel.LogLevel
  readonly config: string | undefined
  /** The arguments without the global options. */
  readonly rest: ReadonlyArray<string>
}

const LEVELS: Record<string, LogLevel.LogLevel> = {
  all: LogLevel.All,
  trace: LogLevel.Trace,
  debug: LogLevel.Debug,
  info: LogLevel.Info,
  warning: LogLevel.Warning,
  error: LogLevel.Error,
  fatal: LogLevel.Fatal,
  none: LogLevel.None
}

export const GLOBAL_OPTIONS = [
  ["--log-level LEVEL", `${Object.keys(LEVELS).join(", ")} (default info; debug also prints the stack trace of a failure)`],
  ["--config FILE", "A JSON file of settings (see SETTINGS); also MZK_CONFIG"]
] as const

/** `args` are the command's arguments (no runtime or script). */
export const takeGlobals = (args: ReadonlyArray<string>, env: { readonly MZK_CONFIG?: string | undefined }): Either.Either<Globals, string> => {
  const rest: Array<string> = []
  let logLevel: LogLevel.LogLevel = LogLevel.Info
  let config = env.MZK_CONFIG === "" ? undefined : env.MZK_CONFIG
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (arg === "--") {
      rest.push(...args.slice(i))
      break
    }
    const match = /^(--log-level|--config)(?:=(.*))?$/.exec(arg)
    if (match === null) {
      rest.push(arg)
      continue
    }
    const value = match[2] ?? args[++i]
    if (value === undefined || (match[2] === undefined && value.startsWith("--"))) {
      return Either.left(`${match[1]} needs a value${match[1] === "--log-level" ? ` (${Object.keys(LEVELS).join(", ")})` : " (a JSON file)"}`)
    }
    if (match[1] === "--config") {
      if (value === "") return Either.left("--config: give a file, e.g. --config mzk.json")
      config = value
    } else {
      const level = LEVELS[value.toLowerCase()]
      if (level === undefined) return Either.left(notOneOf("log-level", value, Object.keys(LEVELS)))
      logLevel = level
    }
  }
  return Either.right({ logLevel, config, rest })
}
