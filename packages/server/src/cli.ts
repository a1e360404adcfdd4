/**
 * The `mzk` command line: `serve`, `worker`, `migrate`, `accounts create`, `keys create|list|revoke`,
 * `circuits add|list|remove|download`. Run from the repository root as `pnpm mzk <command>`. Settings come from
 * flags, MZK_* environment variables or a `--config` file (cli/settings.ts); a failure is one line on
 * stderr (cli/failures.ts), exit code 2 for a usage mistake and 1 for anything else.
 */
import { CliConfig, Command, CommandDescriptor, HelpDoc, Options, Usage, ValidationError } from "@effect/cli"
// By module, not the package's index: the index's HTTP server and client (undici, ws) would be read at every start.
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { auditedAs, CLI_ACTOR, CreateAccountInput, decodeInput } from "@mzk/core"
import { Cause, type Console, Console as ConsoleModule, Effect, Either, Exit, HashMap, Layer, Logger, LogLevel, Option } from "effect"
import { readFileSync } from "node:fs"
import { createAccountWithKey } from "./accounts.js"
import { mzkLogger } from "./logging.js"
import { circuitsCommand } from "./commands/circuits.js"
import { circuitSettings, circuitsOptions } from "./commands/circuitSettings.js"
import { database, describeDatabase, wroteTo } from "./commands/database.js"
import { describeFailure, type Mistyped, stripAnsi, UsageError } from "./commands/failures.js"
import { wrapText } from "./commands/wrap.js"
import { GLOBAL_OPTIONS, takeGlobals } from "./commands/globals.js"
import { keysCommand } from "./commands/keys.js"
import { verifyCommand } from "./commands/verify.js"
import { loadMzk, AccountServicesLive } from "./commands/lazy.js"
import { coreGroup, coreOptions, LoadedConfigFile, optionsOf, parseConfigFile, serverGroup, settingsHelp, workerGroup } from "./commands/settings.js"

/** The signal that stopped this process, for its last log line. */
let stoppedBy: NodeJS.Signals | undefined
let signals = 0
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  // Kept for the process's life: Ctrl-C under `pnpm mzk` arrives twice (the terminal's, and pnpm's
  // forwarding of it), and a second signal without a listener would kill a clean stop midway (exit
  // by signal, and pnpm's ELIFECYCLE). A third forces the end.
  process.on(signal, () => {
    stoppedBy ??= signal
    if (++signals > 2) process.exit(130)
  })
}

/** A long-running command's last words: stopping on a signal is a clean end, said in one log line. */
const untilStopped = <E, R>(run: Effect.Effect<never, E, R>) =>
  run.pipe(Effect.onInterrupt(() => Effect.logInfo("mzk stopped").pipe(Effect.annotateLogs({ signal: stoppedBy ?? "interrupt" }))))

const core = optionsOf(coreGroup)

const serve = Command.make("serve", {
  ...optionsOf(serverGroup),
  database,
  // `--workers` (the default) and `--no-workers` both parse; absent means workers run.
  noWorkers: Options.boolean("no-workers", { negationNames: ["workers"] }).pipe(
    Options.withDescription(
      "--no-workers serves the API only; run the background loops (proof worker, webhook delivery, retention) elsewhere with mzk worker. --workers (default) runs them here"
    )
  ),
  ...core,
  ...circuitSettings
}, (options) =>
  Effect.gen(function*() {
    yield* Effect.logInfo("mzk starting").pipe(Effect.annotateLogs({
      database: describeDatabase(options.database),
      workers: !options.noWorkers
    }))
    const { HttpServerLive } = yield* loadMzk
    return yield* untilStopped(Layer.launch(HttpServerLive({
      database: options.database,
      port: options.port,
      host: options.host,
      operations: { metricsToken: options.metricsToken, accessLog: options.accessLog },
      trustProxy: options.trustProxy,
      workers: !options.noWorkers,
      ...coreOptions(options),
      circuits: circuitsOptions(options)
    })))
  })).pipe(Command.withDescription("Run the HTTP API (and, by default, the background workers)"))

const worker = Command.make("worker", { database, ...optionsOf(workerGroup), ...core, ...circuitSettings }, (options) =>
  Effect.gen(function*() {
    yield* Effect.logInfo("mzk worker starting").pipe(Effect.annotateLogs({ database: describeDatabase(options.database) }))
    const { WorkerProcessLive } = yield* loadMzk
    return yield* untilStopped(Layer.launch(WorkerProcessLive({
      database: options.database,
      port: options.metricsPort,
      host: options.host,
      operations: { metricsToken: options.metricsToken },
      ...coreOptions(options),
      circuits: circuitsOptions(options)
    })))
  })).pipe(Command.withDescription("Run only the background loops (proof worker, webhook delivery, retention)"))

const migrateCommand = Command.make("migrate", { database }, ({ database }) =>
  Effect.scoped(Effect.gen(function*() {
    // The drivers are read here, not at start: a command loads only what it uses.
    const [{ migrate }, { openPostgres }, { openSqlite }] = yield* Effect.promise(() =>
      Promise.all([import("@mzk/adapters-sql"), import("@mzk/adapters-postgres"), import("@mzk/adapters-sqlite")])
    )
    const conn = database.kind === "sqlite" ? yield* openSqlite({ filename: database.filename }) : yield* openPostgres({ connectionString: database.url })
    const report = yield* migrate(conn)
    yield* ConsoleModule.log(report.applied.length === 0 ? "Schema is up to date; nothing to apply." : `Applied: ${report.applied.join(", ")}`)
    if (report.applied.length > 0) yield* wroteTo(database)
  }))).pipe(Command.withDescription("Apply pending database migrations (idempotent)"))

/** Decoded here, at the command line, as the HTTP layer decodes request bodies: the core takes decoded values. */
const decodeAccount = decodeInput(CreateAccountInput)

const accountsCreate = Command.make("create", {
  account: Options.text("name").pipe(
    Options.withDescription("The account's display name (1 to 200 characters, trimmed)"),
    Options.mapEffect((name) =>
      name.trim() === ""
        ? Effect.fail(ValidationError.invalidValue(HelpDoc.p("--name is empty: give the account's display name, e.g. --name \"Acme Corp\"")))
        : decodeAccount({ name }).pipe(
          Effect.mapError((invalid) => ValidationError.invalidValue(HelpDoc.p(`--name: ${invalid.message.replace(/^Invalid request: (name: )?/, "")}`)))
        )
    )
  ),
  database,
  json: Options.boolean("json").pipe(Options.withDescription("Print exactly {\"account_id\", \"api_key\"}"))
}, ({ account: input, database, json }) =>
  Effect.gen(function*() {
    const { account, api_key: apiKey } = yield* createAccountWithKey(input).pipe(auditedAs(CLI_ACTOR))
    yield* ConsoleModule.log(json
      ? JSON.stringify({ account_id: account.id, api_key: apiKey })
      : `Account ${account.id} (${account.name})\nAPI key ${apiKey}\nThe key is shown once; store it now.`)
    yield* wroteTo(database, json)
  }).pipe(Effect.provide(AccountServicesLive({ database })))).pipe(Command.withDescription("Create an account and its first API key"))

const accounts = Command.make("accounts").pipe(
  Command.withDescription("Accounts: create"),
  Command.withSubcommands([accountsCreate])
)

const mzk = Command.make("mzk").pipe(
  Command.withDescription(HelpDoc.blocks([
    HelpDoc.p("mzk: zero-knowledge proofs as a service. mzk COMMAND --help shows a command's options."),
    HelpDoc.h1("GLOBAL OPTIONS (anywhere on the line)"),
    HelpDoc.p(GLOBAL_OPTIONS.map(([name, what]) => `  ${name.padEnd(18)} ${what}`).join("\n")),
    settingsHelp()
  ])),
  Command.withSubcommands([serve, worker, migrateCommand, accounts, keysCommand, circuitsCommand, verifyCommand])
)

const cli = Command.run(mzk, { name: "mzk", version: "0.1.0" })

const TOP_LEVEL: Record<string, CommandDescriptor.Command<unknown>> = {
  serve: serve.descriptor,
  worker: worker.descriptor,
  migrate: migrateCommand.descriptor,
  accounts: accounts.descriptor,
  keys: keysCommand.descriptor,
  circuits: circuitsCommand.descriptor,
  verify: verifyCommand.descriptor
}

/** The commands' names, to point a usage mistake at the right `--help`. */
const COMMANDS: Record<string, ReadonlyArray<string>> = {
  serve: [], worker: [], migrate: [], accounts: ["create"], keys: ["create", "list", "revoke"], circuits: ["add", "list", "remove", "download"], verify: []
}
const commandPath = (args: ReadonlyArray<string>) => {
  const [first, second] = args
  if (first === undefined || !(first in COMMANDS)) return ""
  return second !== undefined && COMMANDS[first]!.includes(second) ? `${first} ${second}` : first
}

/** What mzk itself takes before a command: the global options, help and version. */
const TOP_LEVEL_FLAGS = [...GLOBAL_OPTIONS.map(([usage]) => usage.split(" ")[0]!), "--help", "--version"]

/**
 * The first word of the command line that names no command where one is expected (or a flag
 * where a command is), and what it could have been.
 */
const mistypedCommand = (args: ReadonlyArray<string>): Mistyped | undefined => {
  const [first, second] = args
  if (first === undefined) return undefined
  if (first.startsWith("-")) return { kind: "flag", word: first.replace(/=.*/, ""), choices: TOP_LEVEL_FLAGS }
  if (!(first in COMMANDS)) return { kind: "command", word: first, choices: Object.keys(COMMANDS) }
  const subcommands = COMMANDS[first]!
  if (subcommands.length === 0 || second === undefined || second.startsWith("-") || subcommands.includes(second)) return undefined
  return { kind: "command", word: second, choices: subcommands }
}

/** A command that has subcommands, named alone (`mzk keys`): its help is what it prints. */
const groupAlone = (args: ReadonlyArray<string>) => args.length === 1 && (COMMANDS[args[0]!]?.length ?? 0) > 0

/** The flags a command takes, as its usage line names them: what "did you mean" chooses from. */
const flagsOf = (path: string): ReadonlyArray<string> => {
  const [first, second] = path.split(" ")
  const top = first === undefined ? undefined : TOP_LEVEL[first]
  const sub = top === undefined || second === undefined ? undefined : Option.getOrUndefined(HashMap.get(CommandDescriptor.getSubcommands(top), second))
  const usage = CommandDescriptor.getUsage(sub ?? top ?? mzk.descriptor)
  return [...new Set(stripAnsi(HelpDoc.toAnsiText(Usage.getHelp(usage))).match(/--[a-z][a-z0-9-]*/g) ?? [])]
}

/**
 * @effect/cli says under every text flag what kind of value it takes, "A user-defined piece of
 * text.", which tells a reader nothing the flag's own line and description do not.
 */
const TEXT_KIND = /^ *A user-defined piece of text\.\n\n/gm

/**
 * Help and messages as plain text where they are not read on a terminal (or NO_COLOR is set), help
 * always plain and wrapped to 80 columns (@effect/cli pads and never wraps), and @effect/cli's own
 * report of a usage mistake left out: the failure is reported below, one line per mistake.
 */
const forPeople = (base: Console.Console, help: boolean): Console.Console => {
  const colour = process.stdout.isTTY === true && (process.env.NO_COLOR ?? "") === ""
  const shape = help ? (text: string) => wrapText(stripAnsi(text).replace(TEXT_KIND, "")) : colour ? (text: string) => text : stripAnsi
  return {
    ...base,
    log: (...args) => base.log(...args.map((arg) => (typeof arg === "string" ? shape(arg) : arg))),
    error: () => Effect.void
  }
}

let exitCode = 0
const args = process.argv.slice(2)
const globals = takeGlobals(args, process.env)
const debug = Either.isRight(globals) && LogLevel.lessThanEqual(globals.right.logLevel, LogLevel.Debug)

const main = Effect.gen(function*() {
  if (Either.isLeft(globals)) return yield* new UsageError({ message: globals.left })
  const { config, rest } = globals.right
  const file = config === undefined ? undefined : yield* Effect.try({
    try: () => readFileSync(config, "utf8"),
    catch: (error) => new UsageError({
      message: `cannot read the config file ${config} (${(error as NodeJS.ErrnoException).code ?? String(error)}): check --config or MZK_CONFIG`,
      hint: "mzk --help lists the settings"
    })
  }).pipe(Effect.flatMap((content) => Either.mapLeft(parseConfigFile(config, content), (message) => new UsageError({ message, hint: "mzk --help lists the settings" }))))
  const console = forPeople(yield* Effect.console, rest.length === 0 || groupAlone(rest) || rest.includes("--help") || rest.includes("-h"))
  yield* cli([...process.argv.slice(0, 2), ...rest]).pipe(
    Effect.provideService(LoadedConfigFile, file),
    Effect.withConsole(console),
    Logger.withMinimumLogLevel(globals.right.logLevel)
  )
}).pipe(
  Effect.catchAllCause((cause) => {
    if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause)
    const words = Either.isRight(globals) ? globals.right.rest : args
    const path = commandPath(words)
    const failure = describeFailure(cause, path, flagsOf(path), mistypedCommand(words))
    return Effect.sync(() => {
      process.stderr.write(`${failure.text}\n`)
      if (debug) process.stderr.write(`${Cause.pretty(cause, { renderErrorCause: true })}\n`)
      exitCode = failure.code
    })
  })
)

// `serve` and `worker` log to stdout, the stream a service manager collects; a one-shot command's
// stdout is its answer (`--json` output a script parses), so its log lines go to stderr.
const LONG_RUNNING = new Set(["serve", "worker"])
const logger = LONG_RUNNING.has(commandPath(Either.isRight(globals) ? globals.right.rest : args))
  ? mzkLogger()
  : Logger.replace(Logger.defaultLogger, Logger.withConsoleError(Logger.jsonLogger))

main.pipe(
  Effect.provide(NodeContext.layer),
  Effect.provide(CliConfig.defaultLayer),
  Effect.provide(logger),
  NodeRuntime.runMain({
    disablePrettyLogger: true,
    disableErrorReporting: true,
    // A signal's interruption is the clean end of `serve` and `worker`: exit 0.
    teardown: (exit, onExit) => onExit(Exit.isSuccess(exit) ? exitCode : Cause.isInterruptedOnly(exit.cause) ? 0 : 1)
  })
)
