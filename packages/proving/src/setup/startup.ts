import { Effect, Layer, Schema } from "effect"
import { join } from "node:path"
import { developmentSetupIsNative, inspectPtau, prepareDevelopmentPtau } from "../build/compiler.js"
import { crsPoints, writeDevelopmentCrs } from "./crs.js"

/**
 * The setup files a process that builds circuits is given: the operator's ptau and UltraHonk CRS,
 * or the development ones made beside a directory. The service's settings name them; this module
 * decides what they mean.
 */
export interface SetupFiles {
  /** The operator's prepared (phase 2) powers of tau, e.g. a Hermez `powersOfTau28_hez_final_<power>.ptau`. */
  readonly ptau?: string | undefined
  /** Development only: without `ptau`, a powers of tau of this power made once (cached in `dir`). */
  readonly developmentPtau?: { readonly power: number; readonly dir: string } | undefined
  /** The UltraHonk CRS directory Noir programs are proven against (`bn254_g1.dat`, `bn254_g2.dat`). */
  readonly noirCrs?: string | undefined
}

/** Where the UltraHonk CRS is, whether it is the development one, and how many points that one must hold. */
export interface NoirCrsSetup {
  readonly path: string
  readonly development: boolean
  readonly points: number
}

/**
 * The UltraHonk CRS of these files: the operator's, or with a development ptau the development one
 * kept beside it (2^power + 1 points, made at start by `setupStartup`), or none.
 */
export const noirCrsOf = (files: SetupFiles): NoirCrsSetup | undefined =>
  files.noirCrs !== undefined
    ? { path: files.noirCrs, development: false, points: 0 }
    : files.developmentPtau !== undefined
    ? { path: join(files.developmentPtau.dir, "noir-crs"), development: true, points: 2 ** files.developmentPtau.power + 1 }
    : undefined

/** The operator's ptau or CRS did not pass its check at start: not bn128, not prepared for phase 2, unreadable. */
export class PtauError extends Schema.TaggedError<PtauError>()("PtauError", { message: Schema.String }) {}

/**
 * What a process that builds circuits checks and prepares at start: the operator's ptau is read
 * (a wrong file fails the start, not the first upload), and a development ptau is made in the
 * background so the first upload does not wait for it; the same for the UltraHonk CRS.
 * `build`: the limits a development ptau is made under (a build's).
 */
export const setupStartup = (files: SetupFiles, build: { readonly timeoutMs: number; readonly memoryBytes: number }) =>
  Layer.scopedDiscard(Effect.gen(function*() {
    if (files.ptau !== undefined) {
      const path = files.ptau
      const header = yield* inspectPtau(path).pipe(Effect.mapError((failure) => new PtauError({ message: failure.message })))
      if (!header.bn128 || !header.prepared) {
        return yield* new PtauError({
          message: `--ptau ${path}: ${!header.bn128 ? "not a bn128 powers of tau" : "not prepared for phase 2 (run snarkjs powersoftau prepare phase2, or use a Hermez final file)"}`
        })
      }
      yield* Effect.logInfo(`circuits: powers of tau ${path} (power ${header.power}: circuits up to ${2 ** header.power} constraints)`)
    } else if (files.developmentPtau !== undefined && developmentSetupIsNative()) {
      yield* Effect.logWarning("circuits: DEVELOPMENT setup, natively from fresh toxic waste (any size, no powers of tau); circuits built with it are development_only")
    } else if (files.developmentPtau !== undefined) {
      const developmentPtau = files.developmentPtau
      yield* prepareDevelopmentPtau({ developmentPtau, ...build }).pipe(
        Effect.tap((path) => Effect.logWarning(`circuits: DEVELOPMENT powers of tau ${path} (power ${developmentPtau.power}); circuits built with it are development_only`)),
        Effect.catchAll((failure) => Effect.logError(`circuits: the development powers of tau could not be made: ${failure.message}`)),
        Effect.forkScoped
      )
    } else {
      yield* Effect.logInfo("circuits: no powers of tau (--ptau or --dev-ptau); uploads of circom sources are refused (setup_unavailable), prebuilt uploads work")
    }
    yield* noirStartup(files)
  }))

/**
 * The UltraHonk CRS checked at start (a missing or malformed one fails the start, not the first
 * Noir proof), or the development one made in the background when it is not there yet.
 */
const noirStartup = (files: SetupFiles) =>
  Effect.gen(function*() {
    const noir = noirCrsOf(files)
    if (noir === undefined) {
      return yield* Effect.logInfo("circuits: no UltraHonk CRS (--noir-crs or --dev-ptau); uploads of Noir programs are refused (setup_unavailable)")
    }
    const points = Effect.try({ try: () => crsPoints({ path: noir.path }), catch: (e) => new PtauError({ message: `--noir-crs: ${e instanceof Error ? e.message : String(e)}` }) })
    if (!noir.development) {
      const have = yield* points
      return yield* Effect.logInfo(`circuits: UltraHonk CRS ${noir.path} (${have} points: Noir programs up to ${2 ** Math.floor(Math.log2(have - 1))} gates)`)
    }
    yield* prepareDevelopmentNoirCrs(noir).pipe(
      Effect.flatMap((have) =>
        Effect.logWarning(`circuits: DEVELOPMENT UltraHonk CRS ${noir.path} (${have} points); Noir circuits built with it are development_only`)),
      Effect.catchAll((e) => Effect.logError(`circuits: the development UltraHonk CRS could not be made: ${e.message}`)),
      Effect.forkScoped
    )
  })

/**
 * The development UltraHonk CRS, made from a fresh τ (forgotten at once) when the directory does
 * not hold enough points yet: what --dev-ptau gives Noir programs. Whoever runs the machine could
 * have kept τ: development only. Its points.
 */
export const prepareDevelopmentNoirCrs = (noir: Pick<NoirCrsSetup, "path" | "points">): Effect.Effect<number, PtauError> =>
  Effect.gen(function*() {
    const have = yield* Effect.orElseSucceed(Effect.try(() => crsPoints({ path: noir.path })), () => 0)
    if (have >= noir.points) return have
    yield* Effect.tryPromise({
      try: () => writeDevelopmentCrs(noir.path, noir.points),
      catch: (e) => new PtauError({ message: `the development UltraHonk CRS could not be made at ${noir.path}: ${e instanceof Error ? e.message : String(e)}` })
    })
    return noir.points
  })
