import {
  BuildFailure,
  type BuildFile,
  type BuildInput,
  type BuildOutput,
  CircuitCompiler,
  type SourceSetup
} from "@mzk/core"
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { Cause, Duration, Effect, Either, Layer, Runtime, Schedule, Stream } from "effect"
import { open } from "node:fs/promises"
import {
  CrsError,
  NoirAbiError,
  noirCircuitInputs,
  type NoirProgram,
  noirPublicSignals,
  readNoirAbi,
  UltraHonkError,
  ultraHonkKeyBytes,
  ultraHonkKeyRecord,
  ultraHonkSetup,
  ultraHonkSolidityVerifierForKey
} from "../noir/index.js"
import { MissingOptionalPackage, missingPackages } from "../optionalPackages.mjs"
import { renderVerifier } from "../solidity/verifier.js"
import { nativeDevelopmentSetup } from "./developmentSetup.mjs"
import { readPtauHeader } from "../formats/iden3.mjs"
import { type ChildMessage, decodeChildMessage, type JobSpec, type JobSuccess } from "./jobAnswer.js"
import { makePtauProgressLog } from "./ptauProgress.js"
import { checkUpload } from "./upload.js"

export interface CircuitCompilerOptions {
  /** The operator's powers of tau, prepared for phase 2 (e.g. a Hermez `powersOfTau28_hez_final_<power>.ptau`). */
  readonly ptau?: string
  /**
   * Explicit opt-in to a development setup when there is no `ptau`; circuits set up so are
   * `development_only`. Where the native addon loads, each circuit's key is made natively from fresh
   * toxic waste, of any size (the build's time and memory limits bound it), and `power`/`dir` are
   * unused. Without the addon: a locally made powers of tau, generated on first use (one
   * contribution, prepared for phase 2), cached as `dir/dev_pot<power>.ptau`, whose power bounds
   * circuit size, and snarkjs's setup against it.
   */
  readonly developmentPtau?: { readonly power: number; readonly dir: string }
  /** Tests: which optional packages count as installed (default: those on disk). */
  readonly isInstalled?: (name: string) => boolean
  /** Tests: "snarkjs" takes the development ptau even where the native setup is available. */
  readonly developmentSetup?: "native" | "snarkjs"
  /** A build's time limit; the build process is killed past it (`compile_timeout`). */
  readonly timeoutMs: number
  /** A build's memory ceiling (resident set of its process); killed past it (`compile_memory_exceeded`). */
  readonly memoryBytes: number
  /** Tests: the script every build child runs instead of buildJob.mjs / noirJob.mjs. */
  readonly jobScript?: string
  /** Where builds get their temp directories (default: the OS temp dir). */
  readonly workDir?: string
  /**
   * The UltraHonk CRS directory (`bn254_g1.dat`, `bn254_g2.dat`; see docs/proving-systems-noir.md):
   * without it, uploads of Noir programs are refused (`setup_unavailable`).
   */
  readonly noirCrs?: string
  /** The CRS was made here with a τ someone could have kept: Noir circuits are `development_only`. */
  readonly noirCrsDevelopment?: boolean
}

const JOB = fileURLToPath(new URL("./buildJob.mjs", import.meta.url))
const NOIR_JOB = fileURLToPath(new URL("./noirJob.mjs", import.meta.url))
const MEMORY_POLL = Duration.millis(50)

/** The power of a powers-of-tau file (and whether it is usable: bn128, prepared for phase 2), read from its header. */
export const inspectPtau = (path: string) =>
  Effect.try({
    try: () => readPtauHeader(path),
    catch: (e) => new BuildFailure({ code: "internal", message: `cannot read the powers of tau file ${path}: ${String(e)}` })
  })

const internal = (message: string) => new BuildFailure({ code: "internal", message })

/** Making a development ptau is server setup, not a build: it gets its own, longer limit. */
const DEV_PTAU_MIN_TIMEOUT_MS = 60 * 60_000

/** Resident set size of a live process in bytes (Linux); null once it is gone or on another OS. */
const residentBytes = (pid: number): number | null => {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))
    return match ? Number(match[1]) * 1024 : null
  } catch {
    return null
  }
}

const alive = (child: ChildProcess) => child.exitCode === null && child.signalCode === null

/**
 * Runs one build job in a fresh `node` process inside `dir`, and owns its limits: a memory
 * watcher polls the child's resident set and kills it past the ceiling (V8's heap limit alone
 * cannot see WebAssembly memory, where circom and the curve arithmetic live), and the time limit
 * is Effect's, so interruption also kills the child.
 */
const runJob = <S extends JobSpec>(dir: string, spec: S, options: CircuitCompilerOptions) =>
  Effect.acquireUseRelease(
    Effect.try({
      try: () =>
        spawn(process.execPath, [
          `--max-old-space-size=${Math.max(16, Math.floor(options.memoryBytes / 2 ** 20))}`,
          options.jobScript ?? (spec.kind === "noir" || spec.kind === "acir" ? NOIR_JOB : JOB)
        ], {
          cwd: dir,
          // The child compiles untrusted sources: give it none of the server's environment (secrets).
          // Its temporary files (the Noir compiler's project folder) go inside the build's folder,
          // so they go with it, also when the child is killed.
          env: { PATH: process.env["PATH"] ?? "", TMPDIR: dir },
          stdio: ["ignore", "ignore", "pipe", "ipc"],
          serialization: "advanced"
        }),
      catch: (e) => internal(`cannot start the build process: ${String(e)}`)
    }),
    (child) => Effect.flatMap(Effect.runtime<never>(), (runtime) => {
      // The child reports progress while it makes a development ptau; logged here, in order, as it comes.
      const logProgress = makePtauProgressLog()
      let stderr = ""
      child.stderr?.on("data", (chunk: Buffer) => {
        stderr = (stderr + chunk.toString("utf8")).slice(-8192)
      })
      const outcome = Effect.async<JobSuccess<S["kind"]>, BuildFailure>((resume) => {
        let answer: ChildMessage<S["kind"]> | null = null
        child.on("message", (message) => {
          const decoded = decodeChildMessage(spec.kind as S["kind"], message)
          if (decoded._tag === "progress") return Runtime.runSync(runtime)(logProgress(decoded.progress))
          // The first answer counts: a child that keeps talking cannot change it.
          answer ??= decoded
        })
        child.on("error", (e) => resume(Effect.fail(internal(`build process error: ${e.message}`))))
        child.on("close", (code, signal) => {
          if (answer?._tag === "answer") {
            const settled = answer.answer
            if (Either.isRight(settled)) return resume(Effect.succeed(settled.right))
            return resume(settled.left.code === "internal" && stderr.trim() !== ""
              ? Effect.zipRight(Effect.logError("circuit build failed unexpectedly", stderr.trim().slice(-2000)), Effect.fail(settled.left))
              : Effect.fail(settled.left))
          }
          if (answer?._tag === "unreadable") {
            return resume(Effect.zipRight(
              Effect.logError(`circuit build process answered something unreadable (${answer.what})`, answer.reason, stderr.trim().slice(-2000)),
              Effect.fail(internal("the build process gave an answer this server cannot read; the server's log has the details"))
            ))
          }
          if (/heap out of memory|Reached heap limit|Cannot allocate|Out of memory/i.test(stderr)) {
            return resume(Effect.fail(new BuildFailure({
              code: "compile_memory_exceeded",
              message: `the build ran out of memory (limit ${options.memoryBytes} bytes)`
            })))
          }
          if (signal === "SIGKILL") {
            return resume(Effect.fail(new BuildFailure({
              code: "compile_memory_exceeded",
              message: "the build process was killed by the system (most likely out of memory)"
            })))
          }
          // What the process printed is the operator's to read (paths, stacks), not the account's.
          resume(Effect.zipRight(
            Effect.logError(`circuit build process exited (${signal ?? code}) without an answer`, stderr.trim().slice(-2000)),
            Effect.fail(internal(`the build process exited (${signal ?? code}) without an answer; the server's log has the details`))
          ))
        })
        child.send(spec)
      })
      const watchMemory = Effect.suspend(() => {
        const rss = child.pid === undefined ? null : residentBytes(child.pid)
        if (rss !== null && rss > options.memoryBytes && alive(child)) {
          child.kill("SIGKILL")
          return Effect.fail(new BuildFailure({
            code: "compile_memory_exceeded",
            message: `the build used more than ${options.memoryBytes} bytes of memory (${rss} resident) and was stopped`
          }))
        }
        return Effect.void
      }).pipe(Effect.repeat(Schedule.spaced(MEMORY_POLL)), Effect.zipRight(Effect.never))
      return Effect.raceFirst(outcome, watchMemory).pipe(
        Effect.timeoutFail({
          duration: Duration.millis(options.timeoutMs),
          onTimeout: () => new BuildFailure({ code: "compile_timeout", message: `the build took longer than its limit of ${options.timeoutMs} ms and was stopped` })
        })
      )
    }),
    (child) => Effect.sync(() => {
      if (alive(child)) child.kill("SIGKILL")
    })
  )

const bytesOf = (path: string): Uint8Array => {
  const buffer = readFileSync(path)
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength)
}

/** A build folder's name: `mzk-build-<pid of the process that made it>-<random>`. */
const BUILD_DIR = /^mzk-build-(\d+)-/

const processAlive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: alive, another user's.
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

/**
 * Removes the build folders that processes left when they were killed mid-build (their folders
 * are removed when a build ends, but not by a SIGKILL), where `workDir` (the OS temp dir) is shared
 * with other processes: only those of processes no longer running. Returns the names removed.
 */
export const removeStaleBuildDirs = (options: Pick<CircuitCompilerOptions, "workDir"> = {}): ReadonlyArray<string> => {
  const base = options.workDir ?? tmpdir()
  let names: Array<string>
  try {
    names = readdirSync(base)
  } catch {
    return []
  }
  return names.filter((name) => {
    const pid = BUILD_DIR.exec(name)?.[1]
    if (pid === undefined || Number(pid) === process.pid || processAlive(Number(pid))) return false
    rmSync(join(base, name), { recursive: true, force: true })
    return true
  })
}

const inTempDir = <A>(options: CircuitCompilerOptions, use: (dir: string) => Effect.Effect<A, BuildFailure>) =>
  Effect.acquireUseRelease(
    Effect.try({
      try: () => {
        const base = options.workDir ?? tmpdir()
        mkdirSync(base, { recursive: true })
        return mkdtempSync(join(base, `mzk-build-${process.pid}-`))
      },
      catch: (e) => internal(`cannot create a build directory: ${String(e)}`)
    }),
    use,
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  )

const writeAll = (dir: string, files: ReadonlyMap<string, Uint8Array>) =>
  Effect.try({
    try: () => {
      for (const [path, bytes] of files) {
        const target = join(dir, path)
        mkdirSync(dirname(target), { recursive: true })
        writeFileSync(target, bytes)
      }
    },
    catch: (e) => internal(`cannot write the upload: ${String(e)}`)
  })

/**
 * Writes a build file into the build directory: a stored artifact chunk by chunk as storage gives
 * it, so a 0.5 GB zkey reaches the build child's disk without ever being whole in this heap.
 */
const writeBuildFile = (dir: string, path: string, file: BuildFile) => {
  if (file instanceof Uint8Array) return writeAll(dir, new Map([[path, file]]))
  const target = join(dir, path)
  const failed = (e: unknown) => internal(`cannot write the upload's ${path}: ${e instanceof Error ? e.message : String(e)}`)
  return Effect.acquireUseRelease(
    Effect.tryPromise({
      try: async () => {
        mkdirSync(dirname(target), { recursive: true })
        return await open(target, "wx", 0o600)
      },
      catch: failed
    }),
    (handle) =>
      Stream.runForEach(Stream.mapError(file.chunks, failed), (chunk) =>
        Effect.tryPromise({
          try: async () => {
            for (let offset = 0; offset < chunk.length;) offset += (await handle.write(chunk, offset, chunk.length - offset)).bytesWritten
          },
          catch: failed
        })),
    (handle) => Effect.promise(() => handle.close())
  )
}

/**
 * Why a server without a powers of tau takes no circom sources, and the two ways to give it one:
 * whoever reads it may run `mzk serve` or embed mzk with `createMzk`.
 */
export const NO_PTAU_MESSAGE =
  "This server has no powers of tau, so it cannot set up circom sources; nothing was stored. Its operator gives it one with " +
  "--ptau FILE (env MZK_PTAU; a phase-2 prepared ceremony file such as powersOfTau28_hez_final_16.ptau) or, for development " +
  "only, --dev-ptau, on mzk serve, mzk worker and mzk circuits add; an application embedding mzk sets createMzk's " +
  "circuits.ptau (or circuits.developmentPtau). Prebuilt uploads (wasm, zkey and sym parts) need no powers of tau."

/** The setup circom sources get under these options: the operator's ptau, a development one, or none. */
export const sourceSetupOf = (options: Pick<CircuitCompilerOptions, "ptau" | "developmentPtau" | "isInstalled">): SourceSetup => {
  // An embedder may leave the compiler out: its uploads are refused, saying what to install.
  const compiler = missingPackages(["circom2", "circomlib"], options.isInstalled)
  if (compiler !== undefined) return { available: false, message: `${compiler.message} Prebuilt uploads (wasm, zkey and sym parts) need neither.` }
  return options.ptau !== undefined
    ? { available: true, developmentOnly: false }
    : options.developmentPtau !== undefined
    ? { available: true, developmentOnly: true }
    : { available: false, message: NO_PTAU_MESSAGE }
}

const buildCircom = (options: CircuitCompilerOptions, input: Extract<BuildInput, { kind: "circom" }>) =>
  Effect.gen(function*() {
    const upload = checkUpload(input.main, input.files)
    if ("code" in upload) return yield* Effect.fail(new BuildFailure(upload))
    // Uploads are refused where there is no setup; this is a build another process took the upload for.
    if (!sourceSetupOf(options).available) {
      return yield* Effect.fail(internal(
        "this process has no powers of tau, so it cannot set up circom sources, though the process that took the upload had one: " +
          "give every process the same --ptau FILE or --dev-ptau (createMzk's circuits.ptau or circuits.developmentPtau)"
      ))
    }
    const system = input.proving_system ?? "groth16"
    // The build sets development Groth16 circuits up natively when the addon loads: no ptau to make
    // first. PLONK and FFLONK are set up from a ptau, the development one made here if need be.
    const nativeSetup = system === "groth16" && options.ptau === undefined && options.developmentPtau !== undefined &&
      developmentSetupIsNative(options)
    if (options.ptau === undefined && options.developmentPtau !== undefined && !nativeSetup) {
      yield* prepareDevelopmentPtau({ ...options, developmentPtau: options.developmentPtau })
    }
    return yield* inTempDir(options, (dir) =>
      Effect.gen(function*() {
        yield* writeAll(dir, new Map([...upload.files].map(([path, bytes]) => [join("src", path), bytes])))
        const result = yield* runJob(dir, {
          kind: "circom",
          main: upload.main,
          system,
          ptau: options.ptau === undefined ? null : resolve(options.ptau),
          developmentPtau: options.ptau === undefined && options.developmentPtau !== undefined
            ? { power: options.developmentPtau.power, dir: resolve(options.developmentPtau.dir) }
            : null,
          nativeSetup
        }, options)
        const files = result.files
        if (files === undefined) return yield* Effect.fail(internal("the build process returned no files"))
        return yield* Effect.try({
          try: (): BuildOutput => ({
            wasm: bytesOf(join(dir, files.wasm)),
            zkey: bytesOf(join(dir, files.zkey)),
            r1cs: bytesOf(join(dir, files.r1cs)),
            sym: bytesOf(join(dir, files.sym)),
            constraints: result.constraints,
            inputs: result.inputs,
            public_signals: result.public_signals,
            verification_key: result.verification_key,
            proving_system: result.proving_system ?? system,
            development_only: result.development_only
          }),
          catch: (e) => internal(`cannot read the build's outputs: ${String(e)}`)
        })
      }))
  })

const checkArtifacts = (options: CircuitCompilerOptions, input: Extract<BuildInput, { kind: "artifacts" }>) =>
  inTempDir(options, (dir) =>
    Effect.gen(function*() {
      // The child reads and checks them from disk: the zkey's points, the wasm, the r1cs.
      const files = new Map<string, BuildFile>([
        ["in/circuit.wasm", input.wasm],
        ["in/circuit.zkey", input.zkey],
        ["in/circuit.sym", input.sym]
      ])
      if (input.r1cs !== null) files.set("in/circuit.r1cs", input.r1cs)
      if (input.sample_inputs !== undefined) files.set("in/sample_inputs.json", input.sample_inputs)
      for (const [path, file] of files) yield* writeBuildFile(dir, path, file)
      const result = yield* runJob(dir, { kind: "artifacts", system: input.proving_system ?? null }, options)
      return {
        wasm: input.wasm,
        zkey: input.zkey,
        r1cs: input.r1cs,
        sym: input.sym,
        constraints: result.constraints,
        inputs: result.inputs,
        public_signals: result.public_signals,
        verification_key: result.verification_key,
        proving_system: result.proving_system ?? "groth16",
        development_only: false
      } satisfies BuildOutput
    }))

// One generation at a time in this process, so concurrent first builds do not each spend minutes on it.
const developmentPtauLock = Effect.unsafeMakeSemaphore(1)

/**
 * The development ptau's path, generated first when it is not cached (one local contribution,
 * prepared for phase 2: minutes at power 12). Builds call it on their own; a server started with
 * --dev-ptau can call it at start so the first upload does not wait.
 */
export const prepareDevelopmentPtau = (
  options: CircuitCompilerOptions & { readonly developmentPtau: { readonly power: number; readonly dir: string } }
): Effect.Effect<string, BuildFailure> => {
  const { power, dir } = options.developmentPtau
  const file = join(dir, `dev_pot${power}.ptau`)
  if (!Number.isInteger(power) || power < 1 || power > 28) {
    return Effect.fail(internal(`the development ptau power must be an integer from 1 to 28, not ${power}`))
  }
  return total(developmentPtauLock.withPermits(1)(
    Effect.suspend(() =>
      existsSync(file) ? Effect.succeed(file) : inTempDir(options, (work) =>
        runJob(work, { kind: "devptau", power, dir: resolve(dir) }, {
          ...options,
          timeoutMs: Math.max(options.timeoutMs, DEV_PTAU_MIN_TIMEOUT_MS)
        })).pipe(Effect.as(file))
    )
  ))
}

/**
 * Whether development circuits are set up natively (the addon loaded): then no development ptau is
 * made or needed, and circuits of any size are set up within the build's time and memory limits.
 */
export const developmentSetupIsNative = (options: Pick<CircuitCompilerOptions, "developmentSetup"> = {}): boolean =>
  options.developmentSetup !== "snarkjs" && nativeDevelopmentSetup() !== undefined

/** Every failure is a BuildFailure: a thrown exception or a defect becomes `internal`, never a crash. */
const total = <A>(effect: Effect.Effect<A, BuildFailure>): Effect.Effect<A, BuildFailure> =>
  effect.pipe(Effect.catchAllDefect((defect) =>
    Effect.zipRight(
      Effect.logError("circuit build failed unexpectedly", Cause.die(defect)),
      Effect.fail(internal("the build failed unexpectedly; the server's log has the details"))
    )))

/**
 * Why a server without an UltraHonk CRS takes no Noir programs, and how its operator gives it one.
 */
export const NO_NOIR_CRS_MESSAGE =
  "This server has no UltraHonk CRS, so it cannot prove Noir programs; nothing was stored. Its operator gives it one with " +
  "--noir-crs DIR (env MZK_NOIR_CRS; a directory holding bn254_g1.dat and bn254_g2.dat, see docs/proving-systems-noir.md) or, " +
  "for development only, --dev-ptau (a CRS made here); an application embedding mzk sets createMzk's circuits.noirCrs."

/** The packages a Noir program's build and proofs need: the compiler, the witness executor and the prover. */
export const NOIR_PACKAGES = ["@noir-lang/noir_wasm", "@noir-lang/noir_js", "@aztec/bb.js"] as const

/** Whether Noir programs can be built and proven under these options. */
export const noirSetupOf = (options: Pick<CircuitCompilerOptions, "noirCrs" | "noirCrsDevelopment" | "isInstalled">): SourceSetup => {
  const absent = missingPackages(NOIR_PACKAGES, options.isInstalled)
  if (absent !== undefined) return { available: false, message: `${absent.message} Nothing was stored.` }
  return options.noirCrs === undefined
    ? { available: false, message: NO_NOIR_CRS_MESSAGE }
    : { available: true, developmentOnly: options.noirCrsDevelopment ?? false }
}

/** bb.js's wasm memory ceiling, in 64 KiB pages, for a byte budget. */
export const wasmPages = (bytes: number) => Math.max(256, Math.min(65536, Math.floor(bytes / 65536)))

/**
 * A promise of the Noir engine under the build's time limit, its errors as the failure `code`
 * (the engine's messages name the field or the shortfall and are safe to show the account).
 */
const noirStep = <A>(options: CircuitCompilerOptions, code: BuildFailure["code"], run: () => Promise<A>) =>
  Effect.tryPromise({
    try: run,
    catch: (e) =>
      e instanceof CrsError
        ? new BuildFailure({ code: "circuit_too_large", message: e.message })
        : e instanceof MissingOptionalPackage
        ? internal(`this process cannot build Noir programs: ${e.message}`)
        : e instanceof NoirAbiError || e instanceof UltraHonkError
        ? new BuildFailure({ code, message: e.message })
        : internal(`the UltraHonk setup failed: ${e instanceof Error ? e.message : String(e)}`)
  }).pipe(Effect.timeoutFail({
    duration: Duration.millis(options.timeoutMs),
    onTimeout: () => new BuildFailure({ code: "compile_timeout", message: `the build took longer than its limit of ${options.timeoutMs} ms and was stopped` })
  }))

/**
 * A Noir program: compiled (sources) or parsed (a prebuilt program JSON) in the build child, the
 * way circom is, then its verification key and gate count from bb.js against the CRS. The record's
 * `wasm` is the program JSON and its `zkey` the verification key (see `CircuitArtifacts`).
 */
const buildNoir = (options: CircuitCompilerOptions, input: Extract<BuildInput, { kind: "noir" | "noir_program" }>) =>
  Effect.gen(function*() {
    const crsDir = options.noirCrs
    if (crsDir === undefined) {
      return yield* Effect.fail(internal(
        "this process has no UltraHonk CRS, though the process that took the upload had one: give every process the same --noir-crs DIR"
      ))
    }
    const prebuilt = input.kind === "noir_program"
    const answer = yield* inTempDir(options, (dir) =>
      runJob(dir, prebuilt ? { kind: "acir", bytes: input.program } : { kind: "noir", files: input.files }, options))
    const code = prebuilt ? "invalid_artifacts" : "compile_error"
    const abi = yield* noirStep(options, code, async () => readNoirAbi(answer.program.abi))
    const program: NoirProgram = { ...answer.program, abi }
    const inputs = yield* noirStep(options, code, async () => noirCircuitInputs(abi))
    const publicSignals = yield* noirStep(options, code, async () => noirPublicSignals(abi))
    const setup = yield* noirStep(options, code, () =>
      ultraHonkSetup(program, { path: crsDir }, { maxMemoryPages: wasmPages(options.memoryBytes) }))
    return {
      wasm: new TextEncoder().encode(JSON.stringify(program)),
      zkey: setup.vk,
      r1cs: null,
      sym: null,
      constraints: setup.gates,
      inputs,
      public_signals: publicSignals,
      verification_key: ultraHonkKeyRecord(setup.vk),
      proving_system: "ultra_honk",
      development_only: options.noirCrsDevelopment ?? false
    } satisfies BuildOutput
  })

const isUltraHonkKey = (key: unknown) =>
  typeof key === "object" && key !== null && (key as Record<string, unknown>)["protocol"] === "ultra_honk"

export const makeCircuitCompiler = (options: CircuitCompilerOptions): typeof CircuitCompiler.Service =>
  CircuitCompiler.of({
    sourceSetup: sourceSetupOf(options),
    noirSetup: noirSetupOf(options),
    build: (input) =>
      total(
        input.kind === "circom"
          ? buildCircom(options, input)
          : input.kind === "artifacts"
          ? checkArtifacts(options, input)
          : buildNoir(options, input)
      ),
    solidityVerifier: (verificationKey) =>
      total(
        isUltraHonkKey(verificationKey)
          ? options.noirCrs === undefined
            ? Effect.fail(internal("this process has no UltraHonk CRS (--noir-crs) to render an UltraHonk verifier with"))
            : noirStep(options, "invalid_artifacts", () =>
              ultraHonkSolidityVerifierForKey(ultraHonkKeyBytes(verificationKey), { path: options.noirCrs! }, {
                maxMemoryPages: wasmPages(options.memoryBytes)
              }))
          : Effect.try({
            try: () => renderVerifier(verificationKey),
            catch: (e) => new BuildFailure({ code: "invalid_artifacts", message: e instanceof Error ? e.message : String(e) })
          })
      )
  })

/**
 * The `CircuitCompiler` port: circom sources are compiled with circom2 (WebAssembly) and set up
 * for Groth16 against the operator's powers of tau with one fresh phase-2 contribution; prebuilt
 * wasm + zkey + sym are checked against each other. Each build runs in its own child process under
 * `timeoutMs` and `memoryBytes`.
 */
export const CircuitCompilerLive = (options: CircuitCompilerOptions): Layer.Layer<CircuitCompiler> =>
  Layer.effect(
    CircuitCompiler,
    Effect.gen(function*() {
      const removed = yield* Effect.sync(() => removeStaleBuildDirs(options))
      if (removed.length > 0) yield* Effect.logInfo(`circuits: removed ${removed.length} build folders left by processes that were killed mid-build`)
      return makeCircuitCompiler(options)
    })
  )
