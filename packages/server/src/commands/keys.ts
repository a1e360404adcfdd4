import { Args, Command, HelpDoc, Options, ValidationError } from "@effect/cli"
import { Accounts, type AccountId, type ApiKey, ApiKeys, auditedAs, CLI_ACTOR, CreateKeyInput, decodeInput, Scope, SCOPES } from "@mzk/core"
import { Console, Effect, Option, Redacted, Schema } from "effect"
import { AccountServicesLive } from "./lazy.js"
import { account } from "./circuits.js"
import { database, wroteTo } from "./database.js"
import { CommandFailed, notOneOf, UsageError } from "./failures.js"
import { option, repeatable, settings } from "./settings.js"
import { printTable } from "./table.js"

const json = Options.boolean("json").pipe(Options.withDescription("Print JSON instead of text"))

const accountMustExist = (id: AccountId) =>
  Effect.flatMap(Accounts, (accounts) => accounts.get(id)).pipe(
    Effect.filterOrFail(Option.isSome, () => new CommandFailed({ message: `No account ${id}; mzk accounts create makes one` }))
  )

const decodeKey = decodeInput(CreateKeyInput)
const isScope = Schema.is(Scope)

/** A key as `--json` prints it: the API's record (never the raw key or its hash). */
const record = (key: ApiKey) => ({ ...key })

const create = Command.make("create", {
  account,
  name: Options.text("name").pipe(Options.withDescription("The key's name: letters, digits and hyphens, up to 64")),
  description: Options.text("description").pipe(Options.withDescription("What the key is for"), Options.optional),
  scopes: Options.text("scope").pipe(
    Options.withPseudoName("scope"),
    Options.withDescription(`A scope the key holds, repeatable: ${SCOPES.join(", ")} (default: every scope)`),
    repeatable,
    Options.mapEffect((scopes) => {
      const unknown = scopes.find((scope) => !isScope(scope))
      return unknown === undefined
        ? Effect.succeed(scopes.filter(isScope))
        : Effect.fail(ValidationError.invalidValue(HelpDoc.p(notOneOf("scope", unknown, SCOPES))))
    })
  ),
  maxActiveKeys: option(settings.maxActiveKeysPerAccount),
  database,
  json: json.pipe(Options.withDescription("Print exactly the API's key record plus \"key\", the raw key"))
}, (flags) =>
  Effect.gen(function*() {
    const input = yield* decodeKey({
      name: flags.name,
      ...(Option.isSome(flags.description) ? { description: flags.description.value } : {}),
      ...(flags.scopes.length > 0 ? { scopes: flags.scopes } : {})
    }).pipe(Effect.mapError((invalid) => new UsageError({ message: invalid.message.replace(/^Invalid request: /, "") })))
    yield* accountMustExist(flags.account)
    const created = yield* (yield* ApiKeys).create(flags.account, input).pipe(
      auditedAs(CLI_ACTOR),
      Effect.catchTags({
        KeyLimitReached: (e) => new CommandFailed({ message: `${e.message}; revoke one with mzk keys revoke, or raise --max-active-keys-per-account` }),
        InsufficientScope: (e) => new CommandFailed({ message: e.message })
      })
    )
    const raw = Redacted.value(created.secret)
    yield* Console.log(flags.json
      ? JSON.stringify({ ...record(created.api_key), key: raw })
      : `Key ${created.api_key.id} (${created.api_key.name}) for ${flags.account}: ${created.api_key.scopes.join(", ")}\n${raw}\nThe key is shown once; store it now.`)
    yield* wroteTo(flags.database, flags.json)
  }).pipe(Effect.provide(AccountServicesLive({ database: flags.database, limits: { maxActiveKeys: flags.maxActiveKeys } })))
).pipe(Command.withDescription("Create an API key for an account; the key is printed once"))

const list = Command.make("list", { account, database, json }, (flags) =>
  Effect.gen(function*() {
    yield* accountMustExist(flags.account)
    const { keys } = yield* (yield* ApiKeys).list(flags.account)
    if (flags.json) return yield* Console.log(JSON.stringify(keys.map(record)))
    const rows = [["ID", "NAME", "PREFIX", "CREATED", "LAST USED", "SCOPES"], ...keys.map((k) => [
      k.id, k.name, k.prefix, k.created_at, k.last_used_at ?? "never", k.scopes.length === SCOPES.length ? "all" : k.scopes.join(",")
    ])]
    yield* printTable(rows)
  }).pipe(Effect.provide(AccountServicesLive({ database: flags.database })))
).pipe(Command.withDescription("List an account's active keys (never the keys themselves)"))

const revoke = Command.make("revoke", {
  id: Args.text({ name: "KEY_ID" }).pipe(Args.withDescription("The key's id (key_…), as mzk keys list shows it")),
  account,
  database
}, (flags) =>
  Effect.gen(function*() {
    yield* accountMustExist(flags.account)
    yield* (yield* ApiKeys).revoke(flags.account, flags.id).pipe(
      auditedAs(CLI_ACTOR),
      Effect.catchTag("KeyNotFound", () => new CommandFailed({ message: `No active key ${flags.id} on ${flags.account}; mzk keys list --account ${flags.account} shows them` }))
    )
    yield* Console.log(`Revoked key ${flags.id}`)
    yield* wroteTo(flags.database)
  }).pipe(Effect.provide(AccountServicesLive({ database: flags.database })))
).pipe(Command.withDescription("Revoke an account's key, permanently"))

export const keysCommand = Command.make("keys").pipe(
  Command.withDescription("Accounts' API keys: create, list, revoke"),
  Command.withSubcommands([create, list, revoke])
)
