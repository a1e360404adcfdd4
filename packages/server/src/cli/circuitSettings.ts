import { HelpDoc, Options, ValidationError } from "@effect/cli"
import { parseBytes } from "@mzk/circuits"
import { DEFAULT_CIRCUITS_CONFIG } from "@mzk/core"
import { Config, Effect, Option } from "effect"
import type { CircuitsOptions } from "../mzk.js"

/** A size such as `50MiB`, `4GiB` or plain bytes, as a usage error when it is not one. */
const bytes = (flag: string) => (text: string) =>
  Option.match(parseBytes(text), {
    onNone: () => Effect.fail(ValidationError.invalidValue(HelpDoc.p(`--${flag}: ${JSON.stringify(text)} is not a size (e.g. 512MiB, 4GiB)`))),
    onSome: Effect.succeed
  })

const MIB = 1024 * 1024

/**
 * How this process builds and caches accounts' circuits, and their limits: the same options on
 * `serve`, `worker` and `circuits add`, each with its MZK_* environment variable.
 */
export const circuitSettings = {
  ptau: Options.file("ptau", { exists: "yes" }).pipe(
    Options.withDescription("The prepared (phase 2) powers of tau file that uploaded circom circuits are set up with, e.g. powersOfTau28_hez_final_16.ptau (MZK_PTAU)"),
    Options.withFallbackConfig(Config.string("MZK_PTAU")),
    Options.optional
  ),
  devPtau: Options.boolean("dev-ptau").pipe(
    Options.withDescription("Development only: without --ptau, make (once) and use a local powers of tau; such circuits are marked development_only (MZK_DEV_PTAU)"),
    Options.withFallbackConfig(Config.boolean("MZK_DEV_PTAU"))
  ),
  devPtauPower: Options.integer("dev-ptau-power").pipe(
    Options.withDescription("The development powers of tau's power: circuits up to 2^power constraints (MZK_DEV_PTAU_POWER)"),
    Options.withFallbackConfig(Config.integer("MZK_DEV_PTAU_POWER")),
    Options.withDefault(12)
  ),
  devPtauDir: Options.directory("dev-ptau-dir").pipe(
    Options.withDescription("Where the development powers of tau is kept (MZK_DEV_PTAU_DIR)"),
    Options.withFallbackConfig(Config.string("MZK_DEV_PTAU_DIR")),
    Options.withDefault("./data/ptau")
  ),
  cacheDir: Options.directory("cache-dir").pipe(
    Options.withDescription("Where circuit artifacts read from the database are cached on local disk (MZK_CACHE_DIR)"),
    Options.withFallbackConfig(Config.string("MZK_CACHE_DIR")),
    Options.withDefault("./data/cache")
  ),
  proverMemory: Options.text("prover-memory").pipe(
    Options.withDescription("Memory for loaded circuits per prover thread, least recently used evicted first (default MZK_PROVER_MEMORY, else 1GiB)"),
    Options.mapEffect(bytes("prover-memory")),
    Options.optional
  ),
  maxUploadSize: Options.text("max-upload-size").pipe(
    Options.withDescription("The largest circuit upload accepted (MZK_MAX_UPLOAD_SIZE)"),
    Options.withFallbackConfig(Config.string("MZK_MAX_UPLOAD_SIZE")),
    Options.withDefault(`${DEFAULT_CIRCUITS_CONFIG.maxUploadBytes / MIB}MiB`),
    Options.mapEffect(bytes("max-upload-size"))
  ),
  maxCircuits: Options.integer("max-circuits-per-account").pipe(
    Options.withDescription("Circuits an account may keep (MZK_MAX_CIRCUITS_PER_ACCOUNT)"),
    Options.withFallbackConfig(Config.integer("MZK_MAX_CIRCUITS_PER_ACCOUNT")),
    Options.withDefault(DEFAULT_CIRCUITS_CONFIG.maxCircuitsPerAccount)
  ),
  maxCompiling: Options.integer("max-compiling-per-account").pipe(
    Options.withDescription("An account's circuits building at once (MZK_MAX_COMPILING_PER_ACCOUNT)"),
    Options.withFallbackConfig(Config.integer("MZK_MAX_COMPILING_PER_ACCOUNT")),
    Options.withDefault(DEFAULT_CIRCUITS_CONFIG.maxCompilingPerAccount)
  ),
  buildConcurrency: Options.integer("build-concurrency").pipe(
    Options.withDescription("Circuit builds this process runs at once (MZK_BUILD_CONCURRENCY)"),
    Options.withFallbackConfig(Config.integer("MZK_BUILD_CONCURRENCY")),
    Options.withDefault(DEFAULT_CIRCUITS_CONFIG.buildConcurrency)
  ),
  buildTimeout: Options.integer("build-timeout").pipe(
    Options.withDescription("Seconds a circuit build may take before it fails with compile_timeout (MZK_BUILD_TIMEOUT)"),
    Options.withFallbackConfig(Config.integer("MZK_BUILD_TIMEOUT")),
    Options.withDefault(DEFAULT_CIRCUITS_CONFIG.buildTimeoutMs / 1000)
  ),
  buildMemory: Options.text("build-memory").pipe(
    Options.withDescription("Memory a circuit build may use before it fails with compile_memory_exceeded (MZK_BUILD_MEMORY)"),
    Options.withFallbackConfig(Config.string("MZK_BUILD_MEMORY")),
    Options.withDefault(`${DEFAULT_CIRCUITS_CONFIG.buildMemoryBytes / MIB / 1024}GiB`),
    Options.mapEffect(bytes("build-memory"))
  )
}

type Parsed<T> = { readonly [K in keyof T]: T[K] extends Options.Options<infer A> ? A : never }
export type CircuitSettings = Parsed<typeof circuitSettings>

/** The parsed options as the composition root takes them. */
export const circuitsOptions = (settings: CircuitSettings): CircuitsOptions => {
  const buildTimeoutMs = settings.buildTimeout * 1000
  return {
    ptau: Option.getOrUndefined(settings.ptau),
    developmentPtau: settings.devPtau ? { power: settings.devPtauPower, dir: settings.devPtauDir } : undefined,
    cacheDir: settings.cacheDir,
    proverMemoryBytes: Option.getOrUndefined(settings.proverMemory),
    maxUploadBytes: settings.maxUploadSize,
    maxCircuitsPerAccount: settings.maxCircuits,
    maxCompilingPerAccount: settings.maxCompiling,
    buildConcurrency: settings.buildConcurrency,
    buildTimeoutMs,
    buildMemoryBytes: settings.buildMemory,
    // A dead worker's build is taken over this long after its time limit ran out: a quarter of
    // the limit, at most a minute, so short limits (and the tests' takeovers) do not wait long.
    leaseMarginMs: Math.min(60_000, Math.ceil(buildTimeoutMs / 4))
  }
}
