/**
 * The `mzk` command line: `serve`, `worker`, `migrate`, `accounts create`, `circuits add|list|remove`. Run from the repository root as
 * `pnpm mzk <command>`. Options fall back to MZK_DATABASE_URL, MZK_PORT and MZK_HOST.
 */
import { Command, HelpDoc, Options, ValidationError } from "@effect/cli"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { migrate } from "@mzk/adapters-sql"
import { openPostgres } from "@mzk/adapters-postgres"
import { openSqlite } from "@mzk/adapters-sqlite"
import { CreateAccountInput, decodeInput } from "@mzk/core"
import { Config, Console, Effect, Layer, Logger, LogLevel, Option } from "effect"
import { createAccountWithKey } from "./accounts.js"
import { circuitsCommand } from "./cli/circuits.js"
import { circuitSettings, circuitsOptions } from "./cli/circuitSettings.js"
import { database, describeDatabase } from "./cli/database.js"
import { MzkCore, MzkServer, MzkWorkerProcess } from "./mzk.js"

// The engine's environment variable is read by the prover pool itself; the flag overrides it.
const proverEngine = Options.choice("prover-engine", ["auto", "native", "snarkjs"]).pipe(
  Options.withDescription("Proof engine: auto (native where its addon is built, else snarkjs), native or snarkjs; default MZK_PROVER_ENGINE, else auto"),
  Options.optional
)

const serve = Command.make("serve", {
  port: Options.integer("port").pipe(Options.withFallbackConfig(Config.integer("MZK_PORT")), Options.withDefault(8080)),
  host: Options.text("host").pipe(Options.withFallbackConfig(Config.string("MZK_HOST")), Options.withDefault("127.0.0.1")),
  database,
  // `--workers` (the default) and `--no-workers` both parse; absent means workers run.
  noWorkers: Options.boolean("no-workers", { negationNames: ["workers"] }).pipe(
    Options.withDescription(
      "--no-workers serves the API only; run the background loops (proof worker, webhook delivery, retention) elsewhere with mzk worker. --workers (default) runs them here"
    )
  ),
  allowInsecureWebhooks: Options.boolean("allow-insecure-webhooks").pipe(
    Options.withDescription("Development only: accept http:// and non-public webhook URLs")
  ),
  proverEngine,
  ...circuitSettings
}, (options) =>
  Effect.gen(function*() {
    yield* Effect.logInfo("mzk starting").pipe(Effect.annotateLogs({
      database: describeDatabase(options.database),
      workers: !options.noWorkers
    }))
    return yield* Layer.launch(MzkServer({
      ...options,
      proverEngine: Option.getOrUndefined(options.proverEngine),
      workers: !options.noWorkers,
      circuits: circuitsOptions(options)
    }))
  })).pipe(Command.withDescription("Run the HTTP API (and, by default, the background workers)"))

const worker = Command.make("worker", {
  database,
  allowInsecureWebhooks: Options.boolean("allow-insecure-webhooks").pipe(
    Options.withDescription("Development only: deliver to http:// and non-public webhook URLs")
  ),
  proverEngine,
  ...circuitSettings
}, (options) =>
  Effect.gen(function*() {
    yield* Effect.logInfo("mzk worker starting").pipe(Effect.annotateLogs({ database: describeDatabase(options.database) }))
    return yield* Layer.launch(MzkWorkerProcess({
      ...options,
      proverEngine: Option.getOrUndefined(options.proverEngine),
      circuits: circuitsOptions(options)
    }))
  })).pipe(Command.withDescription("Run only the background loops (proof worker, webhook delivery, retention)"))

const migrateCommand = Command.make("migrate", { database }, ({ database }) =>
  Effect.scoped(Effect.gen(function*() {
    const conn = database.kind === "sqlite" ? yield* openSqlite({ filename: database.filename }) : yield* openPostgres({ connectionString: database.url })
    const report = yield* migrate(conn)
    yield* Console.log(report.applied.length === 0 ? "Schema is up to date; nothing to apply." : `Applied: ${report.applied.join(", ")}`)
  }))).pipe(Command.withDescription("Apply pending database migrations (idempotent)"))

/** Decoded here, at the command line, as the HTTP layer decodes request bodies: the core takes decoded values. */
const decodeAccount = decodeInput(CreateAccountInput)

const accountsCreate = Command.make("create", {
  account: Options.text("name").pipe(
    Options.withDescription("The account's display name (1 to 200 characters, trimmed)"),
    Options.mapEffect((name) =>
      decodeAccount({ name }).pipe(Effect.mapError((invalid) => ValidationError.invalidValue(HelpDoc.p(`--name: ${invalid.message}`))))
    )
  ),
  database,
  json: Options.boolean("json").pipe(Options.withDescription("Print exactly {\"account_id\", \"api_key\"}"))
}, ({ account: input, database, json }) =>
  Effect.gen(function*() {
    const { account, api_key: apiKey } = yield* createAccountWithKey(input)
    yield* Console.log(json
      ? JSON.stringify({ account_id: account.id, api_key: apiKey })
      : `Account ${account.id} (${account.name})\nAPI key ${apiKey}\nThe key is shown once; store it now.`)
  }).pipe(Effect.provide(MzkCore({ database })))).pipe(Command.withDescription("Create an account and its first API key"))

const accounts = Command.make("accounts").pipe(Command.withSubcommands([accountsCreate]))

const mzk = Command.make("mzk").pipe(Command.withSubcommands([serve, worker, migrateCommand, accounts, circuitsCommand]))

const cli = Command.run(mzk, { name: "mzk", version: "0.1.0" })

cli(process.argv).pipe(
  Effect.provide(NodeContext.layer),
  Effect.provide(Logger.json),
  Logger.withMinimumLogLevel(LogLevel.Info),
  NodeRuntime.runMain({ disablePrettyLogger: true })
)
