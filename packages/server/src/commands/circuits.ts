import { Args, Command, HelpDoc, Options, ValidationError } from "@effect/cli"
import { AccountId, Accounts, auditedAs, CLI_ACTOR, type Circuit, CircuitBuilds, Circuits, decodeInput, DEFAULT_CIRCUITS_CONFIG, PROVING_SYSTEMS, type UploadSource } from "@mzk/core"
import { Console, Duration, Effect, Layer, Option, Schedule } from "effect"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { basename, join, relative, resolve, sep } from "node:path"
import { CoreServicesLive } from "./lazy.js"
import { circuitSettings, circuitsOptions } from "./circuitSettings.js"
import { database, wroteTo } from "./database.js"
import { downloadCommand } from "./download.js"
import { choiceOption, CommandFailed } from "./failures.js"
import { printTable } from "./table.js"
import { repeatable } from "./settings.js"

/** The archive reader the API uses, read only when `circuits add --archive` runs. */
const loadArchives = Effect.promise(() => import("@mzk/proving/archive"))

/**
 * `--archive FILE [--main PATH]`: the archive read by the API's own rules (its files as an upload's,
 * `--main` a path in it, a Noir project without), then, for circom sources, only what main includes.
 */
const archiveInput = (file: string, main: string | undefined, maxBytes: number): Effect.Effect<Upload, ValidationError.ValidationError> =>
  Effect.gen(function*() {
    const { archiveSource, MAX_UPLOAD_FILES, readArchive } = yield* loadArchives
    const source = yield* readArchive(readFileSync(file), { maxBytes, maxFiles: MAX_UPLOAD_FILES }).pipe(
      Effect.flatMap((archive) => archiveSource(archive, main)),
      Effect.mapError((refused) =>
        usage(`--archive ${file}: ${refused.message}: ${(refused.details ?? []).map((d) => `${d.path === "main" ? "--main" : d.path}: ${d.message}`).join("; ")}`))
    )
    if (source.kind === "noir") return { source: { kind: "noir", files: source.files }, ignored: [] }
    const files: Record<string, Uint8Array> = Object.assign(Object.create(null), source.files)
    return yield* reachable(source.main, files)
  })

/** The proving engine, read when `circuits add` runs: `mzk --help` and other commands never load the compiler. */
const loadCircuits = Effect.promise(() => import("@mzk/proving"))

const usage = (message: string) => ValidationError.invalidValue(HelpDoc.p(message))

const decodeAccountId = decodeInput(AccountId)
export const account = Options.text("account").pipe(
  Options.withDescription("The account (acct_…)"),
  Options.mapEffect((text) => decodeAccountId(text).pipe(Effect.mapError(() => usage(`--account: ${JSON.stringify(text)} is not an account id (acct_…)`))))
)

/** Every `.circom` file under `dir`, by its path relative to `dir` (`/`-separated, as includes name it). */
const circomFilesUnder = (dir: string): Array<readonly [string, string]> =>
  (readdirSync(dir, { recursive: true, withFileTypes: true }))
    .filter((entry) => entry.isFile() && entry.name.endsWith(".circom"))
    .map((entry) => {
      const path = join(entry.parentPath, entry.name)
      return [relative(dir, path).split(sep).join("/"), path] as const
    })

/**
 * A Noir project folder as an upload: its `Nargo.toml` and every `.nr` file under `src/`, by their
 * paths in the project (`target/` and anything else nargo does not compile stay behind).
 */
const noirProjectFiles = (dir: string): Record<string, Uint8Array> => {
  const files: Record<string, Uint8Array> = Object.create(null)
  const manifest = join(dir, "Nargo.toml")
  if (existsSync(manifest)) files["Nargo.toml"] = readFileSync(manifest)
  const src = join(dir, "src")
  if (existsSync(src)) {
    for (const entry of readdirSync(src, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile() || !entry.name.endsWith(".nr")) continue
      const path = join(entry.parentPath, entry.name)
      files[relative(dir, path).split(sep).join("/")] = readFileSync(path)
    }
  }
  return files
}

interface SourceFlags {
  readonly archive: Option.Option<string>
  readonly main: Option.Option<string>
  readonly maxUploadSize: number
  readonly noir: Option.Option<string>
  readonly noirProgram: Option.Option<string>
  readonly circom: Option.Option<string>
  readonly include: ReadonlyArray<string>
  readonly wasm: Option.Option<string>
  readonly zkey: Option.Option<string>
  readonly sym: Option.Option<string>
  readonly r1cs: Option.Option<string>
  readonly sampleInputs: Option.Option<string>
}

/** What `circuits add` uploads, and the files under `--include` it left out. */
interface Upload {
  readonly source: UploadSource
  /** Files under the `--include` directories that the main file never includes (directly or through another). */
  readonly ignored: ReadonlyArray<string>
}

/**
 * Of the files found under `--include`, those the main file reaches through its includes, resolved
 * as the build resolves them; the rest (old experiments, test harnesses) would be ignored by the
 * build, so they are not stored either. An upload whose includes do not check out is sent whole:
 * its build fails, saying where.
 */
const reachable = (main: string, files: Record<string, Uint8Array>): Effect.Effect<Upload> => Effect.map(loadCircuits, ({ checkUpload }) => {
  const checked = checkUpload(main, files)
  if ("code" in checked) return { source: { kind: "circom", main, files }, ignored: [] }
  const kept: Record<string, Uint8Array> = Object.assign(Object.create(null), Object.fromEntries(checked.files))
  return { source: { kind: "circom", main: checked.main, files: kept }, ignored: checked.ignored }
})

/**
 * The flags → what the core builds: a main circom file (at its file name) plus the circom files
 * under each `--include` directory (at their paths there, so `include "lib/x.circom"` finds them)
 * that it includes, or the three prebuilt artifacts.
 */
const buildInput = (flags: SourceFlags): Effect.Effect<Upload, ValidationError.ValidationError> => {
  const circomFlags = [flags.circom, flags.wasm, flags.zkey, flags.sym, flags.r1cs, flags.sampleInputs]
  if (Option.isSome(flags.archive)) {
    if ([...circomFlags, flags.noir, flags.noirProgram].some(Option.isSome) || flags.include.length > 0) {
      return Effect.fail(usage("Give --archive FILE (with --main PATH, the main file inside it) alone: not with --circom, --include, --noir or prebuilt files"))
    }
    return archiveInput(flags.archive.value, Option.getOrUndefined(flags.main), flags.maxUploadSize)
  }
  if (Option.isSome(flags.main)) return Effect.fail(usage("--main names the main circom file inside --archive FILE; give --archive too"))
  if (Option.isSome(flags.noir) || Option.isSome(flags.noirProgram)) {
    if (circomFlags.some(Option.isSome) || flags.include.length > 0 || (Option.isSome(flags.noir) && Option.isSome(flags.noirProgram))) {
      return Effect.fail(usage("Give one of --noir DIR (a Noir project), --noir-program FILE, --circom or the prebuilt --wasm, --zkey and --sym"))
    }
    if (Option.isSome(flags.noirProgram)) {
      return Effect.succeed({ source: { kind: "noir_program", program: readFileSync(flags.noirProgram.value) }, ignored: [] })
    }
    return Effect.succeed({ source: { kind: "noir", files: noirProjectFiles(Option.getOrThrow(flags.noir)) }, ignored: [] })
  }
  if (Option.isSome(flags.circom)) {
    if ([flags.wasm, flags.zkey, flags.sym, flags.r1cs, flags.sampleInputs].some(Option.isSome)) {
      return Effect.fail(usage("Give either --circom (sources) or --wasm, --zkey and --sym (prebuilt artifacts), not both"))
    }
    const mainPath = resolve(flags.circom.value)
    const main = basename(mainPath)
    // Without a prototype, a file named `__proto__` is a file like any other.
    const files: Record<string, Uint8Array> = Object.assign(Object.create(null), { [main]: readFileSync(mainPath) })
    for (const dir of flags.include) {
      for (const [path, file] of circomFilesUnder(dir)) {
        if (resolve(file) === mainPath) continue
        if (Object.hasOwn(files, path)) return Effect.fail(usage(`--include: two files would both be ${JSON.stringify(path)}`))
        files[path] = readFileSync(file)
      }
    }
    return reachable(main, files)
  }
  if (Option.isSome(flags.wasm) && Option.isSome(flags.zkey) && Option.isSome(flags.sym)) {
    return Effect.succeed({
      source: {
        kind: "artifacts",
        wasm: readFileSync(flags.wasm.value),
        zkey: readFileSync(flags.zkey.value),
        sym: readFileSync(flags.sym.value),
        r1cs: Option.match(flags.r1cs, { onNone: () => null, onSome: (path) => readFileSync(path) }),
        ...Option.match(flags.sampleInputs, { onNone: () => ({}), onSome: (path) => ({ sample_inputs: readFileSync(path) }) })
      },
      ignored: []
    })
  }
  return Effect.fail(usage(
    "Give --circom main.circom [--include DIR …], or prebuilt --wasm F --zkey F --sym F [--r1cs F] [--sample-inputs F], " +
      "or a Noir program: --noir DIR (Nargo.toml + src/*.nr) or --noir-program FILE (nargo's target/<name>.json)"
  ))
}

/** A circuit as `--json` prints it: the API's record, without its verification key. */
const record = (circuit: Circuit) => ({
  name: circuit.name,
  version: circuit.version,
  owner: circuit.owner,
  status: circuit.status,
  error: circuit.error,
  description: circuit.description,
  constraints: circuit.constraints,
  inputs: circuit.inputs,
  public_signals: circuit.public_signals,
  development_only: circuit.development_only,
  proving_system: circuit.proving_system,
  created_at: circuit.created_at,
  metadata: circuit.metadata
})

const failure = (circuit: Circuit) => {
  const error = circuit.error
  if (error === null) return `Circuit ${circuit.name} failed`
  const where = error.file === undefined ? "" : ` at ${error.file}${error.line === undefined ? "" : `:${error.line}`}`
  // The compiler's message goes on with a code frame; its first line names the mistake.
  return `Circuit ${circuit.name} failed: ${error.code}${where}: ${error.message.split("\n")[0]}`
}

/** Ends the command with one line on stderr and a failing exit status. */
const fail = (line: string) => Effect.fail(new CommandFailed({ message: line }))

const add = Command.make("add", {
  name: Args.text({ name: "NAME" }).pipe(
    Args.withDescription("The circuit's name: the `type` of its proofs. A name the account has already gets its next version")
  ),
  account,
  database,
  circom: Options.file("circom", { exists: "yes" }).pipe(Options.withDescription("The main circuit file"), Options.optional),
  noir: Options.directory("noir", { exists: "yes" }).pipe(
    Options.withDescription("A Noir project folder (Nargo.toml and src/*.nr), compiled here and proven with UltraHonk"),
    Options.optional
  ),
  noirProgram: Options.file("noir-program", { exists: "yes" }).pipe(
    Options.withDescription("A prebuilt Noir program (nargo compile's target/<name>.json), proven with UltraHonk"),
    Options.optional
  ),
  archive: Options.file("archive", { exists: "yes" }).pipe(
    Options.withDescription(
      "The sources as one .zip or .tar.gz, read as the API reads an upload's archive: with --main, circom sources; " +
        "without, a Noir project (Nargo.toml at its root)"
    ),
    Options.optional
  ),
  main: Options.text("main").pipe(
    Options.withDescription("With --archive: the main circom file's path inside the archive (circuits/main.circom)"),
    Options.optional
  ),
  include: Options.directory("include", { exists: "yes" }).pipe(
    Options.withDescription("A directory of circom files the main file includes (repeatable); circomlib is always available"),
    repeatable
  ),
  wasm: Options.file("wasm", { exists: "yes" }).pipe(Options.withDescription("Prebuilt witness generator (circom --wasm)"), Options.optional),
  zkey: Options.file("zkey", { exists: "yes" }).pipe(Options.withDescription("Prebuilt Groth16 proving key (bn128)"), Options.optional),
  sym: Options.file("sym", { exists: "yes" }).pipe(Options.withDescription("Prebuilt signal names (circom --sym)"), Options.optional),
  r1cs: Options.file("r1cs", { exists: "yes" }).pipe(Options.withDescription("Prebuilt constraint system (circom --r1cs), optional"), Options.optional),
  sampleInputs: Options.file("sample-inputs", { exists: "yes" }).pipe(
    Options.withDescription(
      "Prebuilt, optional: one input the circuit accepts, as JSON (an input.json); the check proves it (else the all-zero input)"
    ),
    Options.optional
  ),
  description: Options.text("description").pipe(Options.optional),
  provingSystem: choiceOption("proving-system", PROVING_SYSTEMS).pipe(
    Options.withDescription(
      "Circom sources: set up for groth16 (default: a phase-2 contribution), plonk or fflonk (the powers of tau alone); " +
        "prebuilt: the system the zkey must be of (default: its header decides); --noir and --noir-program: ultra_honk " +
        "(implied; the only one they take)"
    ),
    Options.optional
  ),
  json: Options.boolean("json").pipe(Options.withDescription("Print the circuit record as JSON")),
  ...circuitSettings
}, (flags) =>
  Effect.gen(function*() {
    const { ignored, source } = yield* buildInput(flags)
    if (ignored.length > 0) {
      // On stderr with --json, whose stdout is the record alone.
      const say = flags.json ? Console.error : Console.log
      yield* say(`Left out ${ignored.length} file(s) under --include that ${source.kind === "circom" ? source.main : "the main file"} never includes: ${ignored.join(", ")}`)
    }
    const options = circuitsOptions(flags)
    const { developmentSetupIsNative, prepareDevelopmentPtau } = yield* loadCircuits
    // Made (once) before the build starts, so making it does not count against the build's time limit.
    const universal = Option.isSome(flags.provingSystem) && (flags.provingSystem.value === "plonk" || flags.provingSystem.value === "fflonk")
    // PLONK/FFLONK always set up from a ptau, even where Groth16's development setup is native.
    if (
      source.kind === "circom" && options.ptau === undefined && options.developmentPtau !== undefined &&
      (universal || !developmentSetupIsNative())
    ) {
      const made = yield* prepareDevelopmentPtau({
        developmentPtau: options.developmentPtau,
        timeoutMs: options.buildTimeoutMs ?? DEFAULT_CIRCUITS_CONFIG.buildTimeoutMs,
        memoryBytes: options.buildMemoryBytes ?? DEFAULT_CIRCUITS_CONFIG.buildMemoryBytes
      }).pipe(Effect.either)
      if (made._tag === "Left") return yield* fail(`The development powers of tau could not be made: ${made.left.message}`)
    }
    const { noirCrsOf, prepareDevelopmentNoirCrs } = yield* loadCircuits
    const noir = noirCrsOf(options)
    if ((source.kind === "noir" || source.kind === "noir_program") && noir?.development === true) {
      const made = yield* prepareDevelopmentNoirCrs(noir).pipe(Effect.either)
      if (made._tag === "Left") return yield* fail(made.left.message)
    }
    const accounts = yield* Accounts
    if (Option.isNone(yield* accounts.get(flags.account))) return yield* fail(`No account ${flags.account}; mzk accounts create makes one`)
    const circuits = yield* Circuits
    const created = yield* circuits.create(flags.account, {
      name: flags.name,
      source,
      ...(Option.isSome(flags.description) ? { description: flags.description.value } : {}),
      ...(Option.isSome(flags.provingSystem) ? { proving_system: flags.provingSystem.value } : {})
    }).pipe(auditedAs(CLI_ACTOR), Effect.either)
    if (created._tag === "Left") return yield* fail(created.left.message)
    // Built here, with this command's settings, and nothing else of the database's queue (a
    // server's worker on the same database may take it first: either way it settles).
    const id = created.right.id
    const named = `${created.right.name}@${created.right.version}`
    if (created.right.version > 1 && !flags.json) yield* Console.log(`Added ${named}: version ${created.right.version} of ${created.right.name}`)
    const settled = yield* circuits.get(flags.account, named).pipe(
      Effect.flatMap(Option.match({
        onNone: () => Effect.dieMessage(`Circuit ${named} disappeared while building`),
        onSome: (circuit) => circuit.status === "compiling" ? Effect.fail("compiling" as const) : Effect.succeed(circuit)
      })),
      Effect.retry({ while: (e) => e === "compiling", schedule: Schedule.spaced(Duration.millis(200)) }),
      Effect.provide(id === null ? Layer.empty : Layer.discard(CircuitBuilds.only([id])))
    )
    if (flags.json) yield* Console.log(JSON.stringify(record(settled)))
    yield* wroteTo(flags.database, flags.json)
    if (settled.status === "failed") return yield* fail(failure(settled))
    if (!flags.json) {
      yield* Console.log(
        `Circuit ${settled.name} version ${settled.version} is ready: ${settled.constraints} ${settled.proving_system === "ultra_honk" ? "gates (UltraHonk)" : "constraints"}, public signals ${settled.public_signals.join(", ") || "(none)"}` +
          (settled.development_only ? " (development-only setup: not for production)" : "")
      )
    }
  }).pipe(Effect.provide(CoreServicesLive({ database: flags.database, circuits: circuitsOptions(flags) })))).pipe(Command.withDescription("Add a circuit to an account: compile and set it up now (or check prebuilt artifacts)"))

const list = Command.make("list", {
  account,
  database,
  json: Options.boolean("json").pipe(Options.withDescription("Print the records as JSON"))
}, ({ account, database, json }) =>
  Effect.gen(function*() {
    const circuits = yield* (yield* Circuits).list(account)
    if (json) return yield* Console.log(JSON.stringify(circuits.map(record)))
    // Each name at its newest version (the others stay live: remove NAME@N removes one).
    yield* printTable([["NAME", "VERSION", "STATUS", "CONSTRAINTS", "OWNER"], ...circuits.map((c) => [
      c.name,
      `v${c.version}`,
      c.status,
      c.constraints === null ? "-" : String(c.constraints),
      c.owner === "builtin" ? "builtin" : "account"
    ])])
  }).pipe(Effect.provide(CoreServicesLive({ database })))).pipe(Command.withDescription("List the circuits an account can prove with"))

const remove = Command.make("remove", {
  name: Args.text({ name: "NAME" }).pipe(Args.withDescription("NAME removes every version of the circuit; NAME@N only version N")),
  account,
  database
}, ({ account, database, name }) =>
  Effect.gen(function*() {
    const removed = yield* (yield* Circuits).remove(account, name).pipe(auditedAs(CLI_ACTOR), Effect.either)
    if (removed._tag === "Left") return yield* fail(removed.left.message)
    yield* Console.log(`Removed circuit ${name}`)
    yield* wroteTo(database)
  }).pipe(Effect.provide(CoreServicesLive({ database })))).pipe(
    Command.withDescription("Remove an account's circuit, every version (NAME) or one (NAME@N); refused while proofs of it are queued or running")
  )

export const circuitsCommand = Command.make("circuits").pipe(
  Command.withDescription("Accounts' own circuits: add, list, remove, download"),
  Command.withSubcommands([add, list, remove, downloadCommand(account)])
)
