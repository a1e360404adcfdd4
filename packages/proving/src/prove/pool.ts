import { Prover } from "@mzk/core"
import { loadNativeProver } from "@mzk/prover-native"
import { Config, ConfigError, Duration, Effect, Either, Layer, Option, type Scope } from "effect"
import { availableParallelism } from "node:os"
import { ArtifactFiles } from "../artifacts/files.js"
import { parseBytes } from "../bytes.js"
import { BUILTIN_CIRCUITS, builtinCircuit } from "../catalog.js"
import { snarkjsThreadData } from "../snarkjsDeps.mjs"
import { chooseEngine, type ProverEngine, ProverEngineConfig } from "./engine.js"
import { type ProverLanes, ProverStartupError } from "./lane.js"
import type { ProverPriority } from "./messages.js"
import { circuitFilesOf, makeThreadLane, type ProverStats } from "./threads.js"
import { makeUltraHonkLane } from "./ultraHonkLane.js"

export { chooseEngine, type EngineChoice, type ProverEngine, ProverEngineConfig } from "./engine.js"
export { checkInputs, type ProverLane, type ProverLanes, ProverStartupError } from "./lane.js"
export type { ProverPriority } from "./messages.js"
export { type ProverStats, UNIVERSAL_MEMORY_FACTOR } from "./threads.js"

export interface ProverPoolOptions {
  /** Prover threads; each proves one proof at a time. Default: the core count. */
  readonly poolSize?: number
  /** Per-proof limit, after which the thread is killed and replaced. Default 60 s. */
  readonly timeout?: Duration.DurationInput
  /**
   * PLONK and FFLONK proofs' own limit (snarkjs proves them, several times slower than a Groth16
   * proof of the same circuit). Default 120 s.
   */
  readonly universalTimeout?: Duration.DurationInput
  /**
   * PLONK and FFLONK proofs' memory ceiling, bytes: snarkjs holds the whole key and polynomials
   * several times its domain, so a key whose estimated need (`UNIVERSAL_MEMORY_FACTOR` × the zkey's
   * size) exceeds it is refused before it is loaded, rather than exhausting the thread's memory.
   * Default: the thread's memory budget (`memoryBudgetBytes`).
   */
  readonly universalMemoryBytes?: number
  /**
   * The UltraHonk CRS directory Noir programs are proven against (the compiler's `noirCrs`); without
   * it an `ultra_honk` proof fails with `internal` naming the setting.
   */
  readonly noirCrs?: string
  /** UltraHonk proofs' own limit (bb.js proves them, in wasm). Default 120 s. */
  readonly ultraHonkTimeout?: Duration.DurationInput
  /**
   * UltraHonk proofs' memory ceiling, bytes: Barretenberg's wasm memory may not grow past it (a
   * proof that needs more fails). Default: the thread's memory budget (`memoryBudgetBytes`).
   */
  readonly ultraHonkMemoryBytes?: number
  /**
   * Built-in circuits every thread loads before the pool starts, so their first proofs are as
   * fast as the next ones (default: all of them). Any other circuit is loaded on its first proof.
   */
  readonly preload?: ReadonlyArray<string>
  /**
   * What one prover thread may keep loaded, in bytes: witness calculators and proving keys (a
   * native key's tables included), least recently used evicted first. Per thread, so the pool's
   * most is poolSize × this; native keys are shared by the threads that hold them, so usually
   * less. A circuit larger than the budget is still loaded, alone. A native key also never holds
   * more than this in its process (its tables, resident sections and the scratch of poolSize proofs;
   * the formula is in packages/prover-native's README): one whose bases and scratch alone exceed it
   * loads with no tables beyond its bases (zkeyInfo's overBudget). Default: the MZK_PROVER_MEMORY
   * environment variable (bytes, or with a unit: `512MiB`, `2GiB`), else 1 GiB.
   */
  readonly memoryBudgetBytes?: number
  /**
   * Native engine: the most one key's MSM tables may take, bytes (the bases included; within
   * memoryBudgetBytes). Default 64 MiB: keys up to about 2^14 constraints keep every shifted copy
   * (merkle_membership's full tables are 45 MB, so the built-in circuits prove at full speed), a
   * key of 2^16 or more proves from one or two copies of its bases (1.2–1.3× the CPU of full
   * tables at 2^16, and a peak RSS near rapidsnark's at 2^20). Raise it for speed where
   * memory allows; tables are built once per host (the disk cache), so only memory is at stake.
   */
  readonly tableBudgetBytes?: number
  /** The engine (default: the MZK_PROVER_ENGINE environment variable, else `auto`). */
  readonly engine?: ProverEngine
  /**
   * Native engine: threads that work on one proof. Default: the pool's share of the cores,
   * max(1, floor(cores / poolSize)), so a full pool runs one single-threaded proof per core.
   */
  readonly threadsPerProof?: number
  /**
   * The CPU priority of the prover threads (and the threads the native prover starts), so that on
   * a busy machine the rest of the process (the HTTP API) runs first: `idle` (Linux SCHED_IDLE:
   * they run when the process's other threads do not need the CPU), `low` (nice 10) or `normal`.
   * Needs the native addon (on Linux); ignored where it is absent. Default: the
   * MZK_PROVER_PRIORITY environment variable, else `low` (`idle` can starve proving entirely while
   * other work, such as other processes sharing the process's scheduling group, keeps the CPU busy).
   */
  readonly priority?: ProverPriority
}

/** See `ProverPoolOptions.tableBudgetBytes`. */
export const DEFAULT_TABLE_BUDGET = 64 * 2 ** 20

/** MZK_PROVER_PRIORITY: the prover threads' CPU priority. */
export const ProverPriorityConfig: Config.Config<ProverPriority> = Config.literal("normal", "low", "idle")("MZK_PROVER_PRIORITY").pipe(
  Config.withDefault<ProverPriority>("low")
)

export { parseBytes } from "../bytes.js"

export const DEFAULT_PROVER_MEMORY_BYTES = 2 ** 30

/** MZK_PROVER_MEMORY: each prover thread's memory budget for loaded circuits. */
export const ProverMemoryConfig: Config.Config<number> = Config.string("MZK_PROVER_MEMORY").pipe(
  Config.mapOrFail((text) =>
    Option.match(parseBytes(text), {
      onNone: () => Either.left(ConfigError.InvalidData([], `Expected bytes (1073741824, 512MiB, 2GiB), got ${JSON.stringify(text)}`)),
      onSome: (bytes) => Either.right(bytes)
    })
  ),
  Config.withDefault(DEFAULT_PROVER_MEMORY_BYTES)
)

/** The prover pool with what its threads hold, for operators and tests. */
export type ProverPool = Prover["Type"] & { readonly stats: Effect.Effect<ProverStats> }

/**
 * The `Prover`: one lane per proving system (`ProverLanes`). Groth16, PLONK and FFLONK go to a
 * warm pool of worker threads (`threads.ts`), UltraHonk to bb.js (`ultraHonkLane.ts`). Each thread
 * loads a circuit on its first proof there (its files found by digest through `ArtifactFiles`: built-in ones from `build/`,
 * uploaded ones from the database through the local disk cache) and keeps the least recently used
 * circuits that fit its memory budget: witness calculators and proving keys (native: parsed once
 * per process and shared; snarkjs: the zkey bytes). The built-in circuits are loaded at start.
 * Verification needs no artifacts: the circuit record carries its key. A job that outlives the
 * timeout (or is interrupted) has its thread cancelled (native), killed and replaced. Closing the
 * scope terminates every thread, so nothing keeps the process alive. Logs the engine at start.
 */
export const makeProverPool = (
  options: ProverPoolOptions = {}
): Effect.Effect<ProverPool, ProverStartupError, Scope.Scope | ArtifactFiles> =>
  Effect.gen(function*() {
    const files = yield* ArtifactFiles
    const cores = availableParallelism()
    const poolSize = Math.max(1, options.poolSize ?? cores)
    const timeout = Duration.decode(options.timeout ?? "60 seconds")
    const universalTimeout = Duration.decode(options.universalTimeout ?? "120 seconds")
    const startup = (name: string) => (error: ConfigError.ConfigError) => new ProverStartupError({ message: `${name}: ${error.message}` })
    const requested = options.engine ?? (yield* ProverEngineConfig.pipe(Effect.mapError(startup("MZK_PROVER_ENGINE"))))
    const native = loadNativeProver()
    const choice = yield* chooseEngine(requested, native).pipe(
      Either.mapLeft((message) => new ProverStartupError({ message }))
    )
    const threadsPerProof = Math.max(1, Math.floor(options.threadsPerProof ?? cores / poolSize))
    const priority = options.priority ?? (yield* ProverPriorityConfig.pipe(Effect.mapError(startup("MZK_PROVER_PRIORITY"))))
    const memoryBudgetBytes = options.memoryBudgetBytes ?? (yield* ProverMemoryConfig.pipe(Effect.mapError(startup("MZK_PROVER_MEMORY"))))
    const universalMemoryBytes = options.universalMemoryBytes ?? memoryBudgetBytes
    const preload = yield* Effect.forEach(options.preload ?? BUILTIN_CIRCUITS.map((c) => c.name), (name) =>
      builtinCircuit(name).pipe(
        Effect.mapError(() => new ProverStartupError({ message: `No built-in circuit ${JSON.stringify(name)} to preload` })),
        Effect.flatMap((circuit) => circuitFilesOf(files, circuit)),
        Effect.mapError((error) => new ProverStartupError({ message: error.message }))
      ))
    yield* Effect.logInfo(
      choice.engine === "native"
        ? `prover engine: native (${poolSize * threadsPerProof} threads: ${poolSize} proofs at once × ${threadsPerProof} each, ` +
          `${choice.kernel} kernel, ${priority} priority; ${choice.why})`
        : `prover engine: snarkjs (${poolSize} threads; ${choice.why})`
    )

    const workerData = {
      engine: choice.engine,
      threadsPerProof,
      priority,
      memoryBudgetBytes,
      // A key's precomputed tables never take more than a thread may hold in all, nor more than
      // tableBudgetBytes: by default little enough that a large key proves on its bases alone
      // (the peak RSS target against rapidsnark), while small keys keep most of their copies.
      tableBudgetMB: Math.min(1024, Math.floor(memoryBudgetBytes / 2 ** 20), Math.floor((options.tableBudgetBytes ?? DEFAULT_TABLE_BUDGET) / 2 ** 20)),
      // Native: what one key may hold in all (its tables, resident sections and the scratch of as
      // many proofs as there are threads to run them), and where its tables are cached on disk.
      memoryBudgetMB: Math.max(1, Math.floor(memoryBudgetBytes / 2 ** 20)),
      proofsInFlight: poolSize,
      tableCacheDir: files.tableCacheDir,
      // Native: the first thread to load a key builds its tables (the others wait and share them).
      loadThreads: cores,
      ...snarkjsThreadData("mzk-prover"),
      singleThreadedCurve: true,
      preload
    }
    const threads = yield* makeThreadLane({ poolSize, workerData, timeout, universalTimeout, universalMemoryBytes, files })
    const ultraHonk = makeUltraHonkLane({
      poolSize,
      ...(options.noirCrs === undefined ? {} : { crs: options.noirCrs }),
      timeout: Duration.decode(options.ultraHonkTimeout ?? "120 seconds"),
      memoryBytes: options.ultraHonkMemoryBytes ?? memoryBudgetBytes,
      files
    })
    const lanes: ProverLanes = { groth16: threads, plonk: threads, fflonk: threads, ultra_honk: ultraHonk }
    return {
      capacity: poolSize,
      prove: (circuit, inputs) => lanes[circuit.proving_system].prove(circuit, inputs),
      verify: (circuit, proof, signals) => lanes[circuit.proving_system].verify(circuit, proof, signals),
      stats: threads.stats
    }
  })

/**
 * The prover pool as a scoped layer: threads start (warm, with the built-in circuits) when it
 * is built, stop when it closes. It finds artifacts through `ArtifactFiles` (`ArtifactFilesLive`).
 */
export const ProverPoolLive = (options: ProverPoolOptions = {}): Layer.Layer<Prover, ProverStartupError, ArtifactFiles> =>
  Layer.scoped(Prover, makeProverPool(options))
