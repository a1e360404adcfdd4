import { HelpDoc, Options, ValidationError } from "@effect/cli"
import { parseBytes } from "@mzk/proving/bytes"
import { DEFAULT_AUDIT_CONFIG, DEFAULT_CIRCUITS_CONFIG, DEFAULT_EVENTS_CONFIG, DEFAULT_LIMITS, DEFAULT_PROOFS_CONFIG, DEFAULT_WEBHOOK_CONFIG } from "@mzk/core"
import { trustedProxiesProblem } from "@mzk/http/trusted-proxies"
import { Config, Context, Effect, Either, Option, ParseResult, Schema } from "effect"
import { statSync } from "node:fs"
import { availableParallelism } from "node:os"
import { DEFAULT_DATABASE, type DatabaseTarget, parseDatabaseUrl } from "../databaseTarget.js"

/**
 * Every operator setting of mzk, in one table: each entry is a flag (`--proof-timeout`), the key
 * of the same name in a `--config` file, and an `MZK_*` environment variable, decoded from text by
 * one Schema and documented by one description. The commands' options, the config file's check
 * and the help's SETTINGS section are all made from this table.
 *
 * Precedence: flag > environment variable > config file > default.
 */

/** A setting's value as text → its value; the failure's message says what is wrong with the text. */
const fromText = <A>(target: Schema.Schema<A>, parse: (text: string) => Either.Either<A, string>, format: (a: A) => string) =>
  Schema.transformOrFail(Schema.String, target, {
    strict: true,
    decode: (text, _, ast) =>
      Either.match(parse(text.trim()), {
        onLeft: (message) => ParseResult.fail(new ParseResult.Type(ast, text, message)),
        onRight: ParseResult.succeed
      }),
    encode: (value) => ParseResult.succeed(format(value))
  })

const integer = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  fromText(Schema.Number, (text) => {
    const n = /^-?\d+$/.test(text) ? Number(text) : Number.NaN
    if (!Number.isSafeInteger(n)) return Either.left("is not a whole number")
    if (n < min || n > max) return Either.left(max === Number.MAX_SAFE_INTEGER ? `must be at least ${min}` : `must be from ${min} to ${max}`)
    return Either.right(n)
  }, String)

const UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }

/** Milliseconds, written `250ms`, `90s`, `5m`, `12h`, `30d`, or a plain number of seconds. */
const duration = fromText(Schema.Number, (text) => {
  const match = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?$/.exec(text)
  const ms = match === null ? Number.NaN : Math.round(Number(match[1]) * UNITS[match[2] ?? "s"]!)
  return Number.isSafeInteger(ms) && ms > 0 ? Either.right(ms) : Either.left("is not a duration (e.g. 90s, 5m, 12h, 30d; a plain number is seconds)")
}, formatDuration)

export function formatDuration(ms: number): string {
  for (const unit of ["d", "h", "m", "s"]) if (ms % UNITS[unit]! === 0) return `${ms / UNITS[unit]!}${unit}`
  return `${ms}ms`
}

/** Bytes, written `512MiB`, `4GiB`, or plain bytes. */
const size = fromText(Schema.Number, (text) =>
  Option.match(parseBytes(text), { onNone: () => Either.left("is not a size (e.g. 512MiB, 4GiB)"), onSome: Either.right }), String)

const boolean = fromText(Schema.Boolean, (text) => {
  const lower = text.toLowerCase()
  if (["true", "1", "yes", "on"].includes(lower)) return Either.right(true)
  if (["false", "0", "no", "off"].includes(lower)) return Either.right(false)
  return Either.left("is not true or false")
}, String)

const text = (what: string) => fromText(Schema.String, (t) => (t === "" ? Either.left(`is empty: give ${what}`) : Either.right(t)), (t) => t)

/** A file that exists, checked when the command starts rather than at its first use. */
const existingFile = fromText(Schema.String, (t) => {
  if (t === "") return Either.left("is empty: give a file")
  try {
    return statSync(t).isFile() ? Either.right(t) : Either.left("is not a file")
  } catch {
    return Either.left("does not exist")
  }
}, (t) => t)

const choice = <const L extends string>(...values: ReadonlyArray<L>) =>
  fromText(Schema.Literal(...values), (t) =>
    values.includes(t as L) ? Either.right(t as L) : Either.left(`is not one of ${values.join(", ")}`), (t) => t)

/** Proxies as Express's `trust proxy` names them, comma-separated: `loopback`, `10.0.0.0/8, 192.0.2.7`. */
const proxies = fromText(Schema.Array(Schema.String), (t) => {
  const list = t.split(",").map((entry) => entry.trim()).filter((entry) => entry !== "")
  const problem = trustedProxiesProblem(list)
  return problem === undefined ? Either.right(list) : Either.left(`is not a list of addresses, CIDR ranges, loopback, linklocal or uniquelocal (${problem})`)
}, (list) => list.join(","))

const DatabaseTargetSchema: Schema.Schema<DatabaseTarget> = Schema.Union(
  Schema.Struct({ kind: Schema.Literal("sqlite"), filename: Schema.String }),
  Schema.Struct({ kind: Schema.Literal("postgres"), url: Schema.String })
)
const database = fromText(DatabaseTargetSchema, parseDatabaseUrl, (target) => (target.kind === "sqlite" ? `sqlite:${target.filename}` : target.url))

export interface Setting<A, Out = A> {
  /** `--flag`, and the config file's key. */
  readonly flag: string
  readonly env: string
  /** What the help shows as the value's type: `integer`, `duration`, `size`… */
  readonly label: string
  readonly description: string
  readonly schema: Schema.Schema<A, string>
  readonly default: Out
  /** The default as the help shows it. */
  readonly shown: string
  /** Other names of the flag (`--database-url` for `--database`). */
  readonly aliases?: ReadonlyArray<string>
  /** On/off: `--flag` alone sets it. */
  readonly toggle?: boolean
  /** Never echoed in messages (a token). */
  readonly secret?: boolean
  /** Its schema's messages are whole sentences that show the value themselves (without its secrets). */
  readonly sentences?: boolean
}

type Spec<A> = Omit<Setting<A>, "env" | "default" | "shown"> & { readonly env?: string }
const envName = (flag: string) => `MZK_${flag.toUpperCase().replace(/-/g, "_")}`

/** A setting with a default. */
const setting = <A>(spec: Spec<A> & { readonly default: A; readonly shown?: string }): Setting<A> => ({
  ...spec,
  env: spec.env ?? envName(spec.flag),
  shown: spec.shown ?? Schema.encodeSync(spec.schema)(spec.default)
})
/** A setting whose absence means something (the core's own default, or "off"): `undefined` when not given. */
const optional = <A>(spec: Spec<A> & { readonly shown: string }): Setting<A, A | undefined> => ({
  ...spec,
  env: spec.env ?? envName(spec.flag),
  default: undefined
})

const int = (min: number, max?: number) => ({ label: "integer", schema: integer(min, max) })
const flag = { label: "", schema: boolean, toggle: true } as const

export const settings = {
  // The HTTP server
  port: setting({ flag: "port", ...int(0, 65_535), description: "The port the HTTP API listens on", default: 8080 }),
  host: setting({ flag: "host", label: "address", schema: text("an address, e.g. 127.0.0.1 or 0.0.0.0"), description: "The address the HTTP API listens on (0.0.0.0: every interface)", default: "127.0.0.1" }),
  metricsToken: optional({
    flag: "metrics-token", label: "token", schema: text("a token"), secret: true, shown: "none: /metrics is open",
    description: "The bearer token GET /metrics requires"
  }),
  accessLog: setting({ flag: "access-log", ...flag, description: "Log one line per HTTP request", default: false }),
  trustProxy: setting({
    flag: "trust-proxy", label: "list", schema: proxies, default: [], shown: "none: the connection's peer",
    description: "Proxies whose X-Forwarded-For names the client (the audit log's ip_address): addresses, CIDR ranges, loopback, linklocal, uniquelocal, comma-separated"
  }),
  metricsPort: optional({
    flag: "metrics-port", ...int(1, 65_535), shown: "none",
    description: "mzk worker: serve /healthz, /readyz and /metrics (only those) on this port, at --host"
  }),
  // Storage
  database: setting({
    // `--database-url` too: the name of its variable, MZK_DATABASE_URL.
    flag: "database", aliases: ["database-url"], env: "MZK_DATABASE_URL", label: "url", schema: database, sentences: true,
    description: "sqlite:<path> or postgres://user:password@host:5432/db",
    default: Either.getOrThrow(parseDatabaseUrl(DEFAULT_DATABASE)), shown: DEFAULT_DATABASE
  }),
  // Proofs and the prover
  proofTimeout: setting({ flag: "proof-timeout", label: "duration", schema: duration, description: "How long one proof may take before it fails with timeout", default: DEFAULT_PROOFS_CONFIG.timeoutMs }),
  retention: setting({ flag: "retention", label: "duration", schema: duration, description: "How long settled proofs are kept before they expire", default: DEFAULT_PROOFS_CONFIG.retentionMs }),
  auditRetention: setting({ flag: "audit-retention", label: "duration", schema: duration, description: "How long audit log entries are kept", default: DEFAULT_AUDIT_CONFIG.retentionMs }),
  proverThreads: optional({
    flag: "prover-threads", ...int(1), shown: `the number of cores (${availableParallelism()} here)`,
    description: "Prover threads: proofs this process works on at once"
  }),
  proverEngine: optional({
    flag: "prover-engine", label: "auto | native | snarkjs", schema: choice("auto", "native", "snarkjs"), shown: "auto",
    description: "Proof engine: auto (native where its addon is built, else snarkjs), native or snarkjs"
  }),
  proverMemory: optional({
    flag: "prover-memory", label: "size", schema: size, shown: "1GiB",
    description: "Memory for loaded circuits per prover thread, least recently used evicted first; also the most one native proving key may hold (tables, resident sections, scratch of every thread's proof)"
  }),
  // Webhooks
  webhookTimeout: setting({ flag: "webhook-timeout", label: "duration", schema: duration, description: "How long one webhook delivery attempt may take", default: DEFAULT_WEBHOOK_CONFIG.timeoutMs }),
  allowInsecureWebhooks: setting({ flag: "allow-insecure-webhooks", ...flag, description: "Development only: accept and deliver to http:// and non-public webhook URLs", default: false }),
  // Events
  eventRetention: setting({
    flag: "event-retention", label: "duration", schema: duration, default: DEFAULT_EVENTS_CONFIG.retentionMs,
    description: "How long events are kept (GET /api/v1/events, and how far back a webhook recovery reaches) before they are deleted with their deliveries"
  }),
  // Limits
  proofsPerMinutePerKey: setting({ flag: "proofs-per-minute-per-key", ...int(1), description: "Proof requests one API key may make per minute", default: DEFAULT_LIMITS.proofRequestsPerMinutePerKey }),
  proofsPerDayPerAccount: setting({ flag: "proofs-per-day-per-account", ...int(1), description: "Proofs one account may request per day", default: DEFAULT_LIMITS.proofsPerDayPerAccount }),
  maxRunningProofsPerAccount: setting({ flag: "max-running-proofs-per-account", ...int(1), description: "Proofs of one account worked on at once", default: DEFAULT_LIMITS.maxRunningProofsPerAccount }),
  maxWebhooksPerAccount: setting({ flag: "max-webhooks-per-account", ...int(1), description: "Webhooks one account may register", default: DEFAULT_LIMITS.maxWebhooksPerAccount }),
  maxVerificationKeysPerAccount: setting({
    flag: "max-verification-keys-per-account", ...int(1), description: "Verification keys one account may register (POST /api/v1/verification-keys)",
    default: DEFAULT_LIMITS.maxVerificationKeysPerAccount
  }),
  maxBatchSize: setting({ flag: "max-batch-size", ...int(1), description: "Proofs in one batch request", default: DEFAULT_LIMITS.maxBatchSize }),
  maxActiveKeysPerAccount: setting({ flag: "max-active-keys-per-account", ...int(1), description: "Active API keys one account may hold", default: DEFAULT_LIMITS.maxActiveKeys }),
  // Accounts' circuits
  ptau: optional({
    flag: "ptau", label: "file", schema: existingFile, shown: "none",
    description: "The prepared (phase 2) powers of tau file that uploaded circom circuits are set up with, e.g. powersOfTau28_hez_final_16.ptau"
  }),
  devPtau: setting({ flag: "dev-ptau", ...flag, description: "Development only: without --ptau, set circom uploads up from fresh local toxic waste (natively, any size; without the native addon, against a local powers of tau made once); such circuits are marked development_only", default: false }),
  devPtauPower: setting({ flag: "dev-ptau-power", ...int(1, 28), description: "Without the native addon only: the development powers of tau's power, circuits up to 2^power constraints (the native setup has no such cap)", default: 12 }),
  devPtauDir: setting({ flag: "dev-ptau-dir", label: "directory", schema: text("a directory"), description: "Without the native addon only: where the development powers of tau is kept", default: "./data/ptau" }),
  noirCrs: optional({
    flag: "noir-crs", label: "directory", schema: text("a directory"), shown: "none",
    description: "The UltraHonk CRS Noir programs are proven against: a directory holding bn254_g1.dat and bn254_g2.dat (Aztec's ignition points, or made from your powers of tau; see docs/proving-systems-noir.md). Without it, Noir uploads are refused, except with --dev-ptau (a development CRS made in --dev-ptau-dir)"
  }),
  cacheDir: setting({ flag: "cache-dir", label: "directory", schema: text("a directory"), description: "Where circuit artifacts read from the database are cached on local disk", default: "./data/cache" }),
  maxUploadSize: setting({ flag: "max-upload-size", label: "size", schema: size, description: "The largest circuit upload accepted", default: DEFAULT_CIRCUITS_CONFIG.maxUploadBytes, shown: "50MiB" }),
  maxCircuitsPerAccount: setting({ flag: "max-circuits-per-account", ...int(0), description: "Circuits an account may keep, every live version counted (each holds its artifacts)", default: DEFAULT_CIRCUITS_CONFIG.maxCircuitsPerAccount }),
  maxCompilingPerAccount: setting({ flag: "max-compiling-per-account", ...int(1), description: "An account's circuits building at once", default: DEFAULT_CIRCUITS_CONFIG.maxCompilingPerAccount }),
  buildConcurrency: setting({ flag: "build-concurrency", ...int(1), description: "Circuit builds this process runs at once", default: DEFAULT_CIRCUITS_CONFIG.buildConcurrency }),
  buildTimeout: setting({ flag: "build-timeout", label: "duration", schema: duration, description: "How long a circuit build may take before it fails with compile_timeout", default: DEFAULT_CIRCUITS_CONFIG.buildTimeoutMs }),
  buildMemory: setting({ flag: "build-memory", label: "size", schema: size, description: "Memory a circuit build may use before it fails with compile_memory_exceeded", default: DEFAULT_CIRCUITS_CONFIG.buildMemoryBytes, shown: `${DEFAULT_CIRCUITS_CONFIG.buildMemoryBytes / 2 ** 30}GiB` })
}

// Schema is invariant in its type, so a table of settings of different types can only be typed loosely.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnySetting = Setting<any, any>
const all: ReadonlyArray<AnySetting> = Object.values(settings)
const byFlag = new Map(all.map((s) => [s.flag, s]))

/** A config file, checked: its path and its values as text, by flag name. */
export interface ConfigFile {
  readonly path: string
  readonly values: Readonly<Record<string, string>>
}

/** The `--config` file of this run, if any: what settings fall back to after the environment. */
export class LoadedConfigFile extends Context.Reference<LoadedConfigFile>()("@mzk/server/cli/LoadedConfigFile", {
  defaultValue: (): ConfigFile | undefined => undefined
}) {}

const usage = (message: string) => ValidationError.invalidValue(HelpDoc.p(message))

/** What is wrong with `text` as `setting`'s value, said with where it came from. */
const decode = <A>(setting: Setting<A, unknown>, text: string, source: string): Effect.Effect<A, string> =>
  Schema.decodeEither(setting.schema)(text).pipe(
    Either.mapLeft((error) => {
      const what = ParseResult.ArrayFormatter.formatErrorSync(error)[0]?.message ?? "is not valid"
      if (setting.sentences === true) return `${source}: ${what}`
      return `${source}: ${setting.secret === true ? "the value" : JSON.stringify(text)} ${what}`
    })
  )

/** The setting's value: its flag's, else its environment variable's, else the config file's, else its default. */
const resolve = <A, Out>(setting: Setting<A, Out>, given: Option.Option<string>): Effect.Effect<A | Out, string> =>
  Effect.gen(function*() {
    if (Option.isSome(given)) return yield* decode(setting, given.value, `--${setting.flag}`)
    // An empty variable counts as unset, as `MZK_X=` in an env file means "not set".
    const env = yield* Config.option(Config.string(setting.env)).pipe(Effect.orElseSucceed(() => Option.none<string>()))
    if (Option.isSome(env) && env.value !== "") return yield* decode(setting, env.value, setting.env)
    const file = yield* LoadedConfigFile
    const value = file?.values[setting.flag]
    if (file !== undefined && value !== undefined) return yield* decode(setting, value, `${file.path}: "${setting.flag}"`)
    return setting.default
  })

const describe = (setting: AnySetting) => `${setting.description}. Env ${setting.env}; default ${setting.shown}.`

/** The command-line option of one setting, resolved through the environment and the config file. */
export const option = <A, Out>(setting: Setting<A, Out>): Options.Options<A | Out> => {
  const given: Options.Options<Option.Option<string>> = setting.toggle === true
    ? Options.boolean(setting.flag).pipe(Options.withDescription(describe(setting)), Options.map((on) => (on ? Option.some("true") : Option.none())))
    : Options.text(setting.flag).pipe(Options.withPseudoName(setting.label), Options.withDescription(describe(setting)), Options.optional)
  return (setting.aliases ?? []).reduce((options, alias) => Options.withAlias(options, alias), given).pipe(Options.mapEffect((flag) => resolve(setting, flag).pipe(Effect.mapError(usage))))
}

/**
 * A flag given any number of times, none included, and shown as optional in the help
 * (`[--scope scope]...`): `Options.repeated` alone shows it as if it were required.
 */
export const repeatable = <A>(options: Options.Options<A>): Options.Options<Array<A>> =>
  options.pipe(Options.repeated, Options.optional, Options.map(Option.getOrElse((): Array<A> => [])))

type Values<T> = { readonly [K in keyof T]: T[K] extends Setting<infer A, infer Out> ? A | Out : never }
type OptionsOf<T> = { readonly [K in keyof T]: T[K] extends Setting<infer A, infer Out> ? Options.Options<A | Out> : never }

/** The options of a group of settings, for `Command.make`'s config. */
export const optionsOf = <T extends Record<string, AnySetting>>(group: T): OptionsOf<T> =>
  Object.fromEntries(Object.entries(group).map(([key, setting]) => [key, option(setting)])) as OptionsOf<T>
export type SettingValues<T> = Values<T>

const pick = <const K extends keyof typeof settings>(...keys: ReadonlyArray<K>): Pick<typeof settings, K> =>
  Object.fromEntries(keys.map((key) => [key, settings[key]])) as Pick<typeof settings, K>

export const serverGroup = pick("port", "host", "metricsToken", "accessLog", "trustProxy")
/** A worker's operational endpoints: its proofs and deliveries are counted in its own metrics. */
export const workerGroup = pick("metricsPort", "host", "metricsToken")
export const databaseGroup = pick("database")
/** What a process running the core's loops takes: proofs, the prover, webhooks, limits. */
export const coreGroup = pick(
  "proofTimeout", "retention", "auditRetention", "proverThreads", "proverEngine", "webhookTimeout", "allowInsecureWebhooks", "eventRetention",
  "proofsPerMinutePerKey", "proofsPerDayPerAccount", "maxRunningProofsPerAccount", "maxWebhooksPerAccount", "maxBatchSize",
  "maxActiveKeysPerAccount", "maxVerificationKeysPerAccount"
)
export const circuitsGroup = pick(
  "ptau", "noirCrs", "devPtau", "devPtauPower", "devPtauDir", "cacheDir", "proverMemory", "maxUploadSize", "maxCircuitsPerAccount",
  "maxCompilingPerAccount", "buildConcurrency", "buildTimeout", "buildMemory"
)

/** Edits (insert, delete, replace) from `a` to `b`: for "did you mean". */
export const distance = (a: string, b: string): number => {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
    }
    previous = current
  }
  return previous[b.length]!
}

/** The name of `names` closest to `name`, if one is a likely typo of it (at most two edits). */
export const nearest = (name: string, names: ReadonlyArray<string>): string | undefined => {
  let best: string | undefined
  let bestDistance = 3
  for (const candidate of names) {
    const d = distance(name, candidate)
    if (d < bestDistance) [best, bestDistance] = [candidate, d]
  }
  return best
}

const ConfigFileJson = Schema.parseJson(Schema.Record({ key: Schema.String, value: Schema.Union(Schema.String, Schema.Number, Schema.Boolean) }))

/**
 * Reads and checks a `--config` file: JSON, an object whose keys are settings' flag names and
 * whose values are what the flag takes (numbers and booleans as JSON's own). Every value is
 * decoded here, so a mistake is reported naming the file and the key, whatever the command.
 */
export const parseConfigFile = (path: string, content: string): Either.Either<ConfigFile, string> => {
  const parsed = Schema.decodeUnknownEither(ConfigFileJson)(content)
  if (Either.isLeft(parsed)) {
    const issue = ParseResult.ArrayFormatter.formatErrorSync(parsed.left)[0]
    return Either.left(issue !== undefined && issue.path.length > 0
      ? `${path}: "${String(issue.path[0])}" must be a string, a number or a boolean`
      : `${path} is not a JSON object of settings (${issue?.message.split("\n")[0] ?? "unreadable"})`)
  }
  const values: Record<string, string> = {}
  for (const [key, value] of Object.entries(parsed.right)) {
    const setting = byFlag.get(key)
    if (setting === undefined) {
      const near = nearest(key, all.map((s) => s.flag))
      return Either.left(`${path}: unknown setting "${key}"${near === undefined ? "" : `: did you mean "${near}"?`}`)
    }
    const text = String(value)
    const checked = Effect.runSync(Effect.either(decode(setting, text, `${path}: "${key}"`)))
    if (Either.isLeft(checked)) return Either.left(checked.left)
    values[key] = text
  }
  return Either.right({ path, values })
}

/** The help's SETTINGS section: each flag, its variable and its default. */
export const settingsHelp = (): HelpDoc.HelpDoc => {
  const width = Math.max(...all.map((s) => s.flag.length + 2))
  return HelpDoc.blocks([
    HelpDoc.h1("SETTINGS"),
    HelpDoc.p(
      "Each setting is a flag of the commands that use it, an MZK_* environment variable, and a key of the --config file " +
        "(the flag's name, e.g. {\"port\": 8080, \"proof-timeout\": \"90s\"}). A flag wins over the environment, the environment " +
        "over the config file, the config file over the default. Durations: 90s, 5m, 12h, 30d (a plain number is seconds). Sizes: 512MiB, 4GiB."
    ),
    HelpDoc.p(all.map((s) => `  --${s.flag.padEnd(width)} ${s.env}, default ${s.shown}`).join("\n"))
  ])
}

/** The core's settings as the composition root (`MzkOptions`) takes them. */
export const coreOptions = (values: SettingValues<typeof coreGroup>) => ({
  proofs: { timeoutMs: values.proofTimeout, retentionMs: values.retention },
  audit: { retentionMs: values.auditRetention },
  limits: {
    proofRequestsPerMinutePerKey: values.proofsPerMinutePerKey,
    proofsPerDayPerAccount: values.proofsPerDayPerAccount,
    maxRunningProofsPerAccount: values.maxRunningProofsPerAccount,
    maxWebhooksPerAccount: values.maxWebhooksPerAccount,
    maxVerificationKeysPerAccount: values.maxVerificationKeysPerAccount,
    maxBatchSize: values.maxBatchSize,
    maxActiveKeys: values.maxActiveKeysPerAccount
  },
  webhooks: { timeoutMs: values.webhookTimeout },
  events: { retentionMs: values.eventRetention },
  proverThreads: values.proverThreads,
  proverEngine: values.proverEngine,
  allowInsecureWebhooks: values.allowInsecureWebhooks
})
