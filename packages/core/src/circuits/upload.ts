import { Effect, Schema } from "effect"
import { decodeInput, invalidRequest } from "../kernel/decode.js"
import type { InvalidRequest, StorageError } from "../kernel/errors.js"
import { MetadataInput } from "../kernel/metadata.js"
import { StoredText } from "../kernel/text.js"
import { CircuitName, type CircuitSource, type Digest } from "./circuit.js"
import type { BuildInput, SetupSystem, StoredBuildFile } from "./compiler.js"
import type { StagedArtifact } from "./artifactStreams.js"
import type { ArtifactsRepo } from "./repo.js"

/**
 * A prebuilt artifact as an upload delivers it: bytes in memory, or already staged in artifact
 * storage as it arrived (HTTP streams the large parts there, so no process holds a whole zkey).
 */
export type UploadedArtifact = Uint8Array | StagedArtifact

/** What an upload holds: a build's input, with prebuilt artifacts possibly staged rather than in memory. */
export type UploadSource =
  | Extract<BuildInput, { readonly kind: "circom" | "noir" | "noir_program" }>
  | {
    readonly kind: "artifacts"
    readonly wasm: UploadedArtifact
    readonly zkey: UploadedArtifact
    readonly sym: UploadedArtifact
    readonly r1cs: UploadedArtifact | null
    readonly sample_inputs?: Uint8Array
    readonly proving_system?: SetupSystem
  }

/**
 * The upload's system, kept only where it says something: groth16 sources are stored as before the
 * field existed (absent means groth16), and a prebuilt upload that named none lets its zkey decide.
 */
const systemOf = (source: { readonly kind: string; readonly proving_system?: string | undefined }): { proving_system?: SetupSystem } =>
  source.proving_system === undefined || (source.kind === "circom" && source.proving_system === "groth16")
    ? {}
    : { proving_system: source.proving_system as SetupSystem }

/** The fields of an upload besides its files, checked as every stored text is. */
const UploadFields = Schema.Struct({
  name: CircuitName,
  description: Schema.optionalWith(
    StoredText.pipe(Schema.maxLength(1024, { message: () => "description must be at most 1024 characters" })),
    { exact: true }
  ),
  metadata: Schema.optionalWith(MetadataInput, { exact: true })
})
export const decodeUploadFields = decodeInput(UploadFields)

/**
 * Why a file's path cannot be its place in an upload, or undefined: a relative path of non-empty
 * segments, none `.` or `..`, `/`-separated, so no file lands outside the build's directory. The
 * one rule for every way in (HTTP parts' filenames, the CLI's files); includes that leave the
 * upload are the compiler's to refuse, since only it reads them.
 */
export const uploadPathProblem = (path: string): string | undefined => {
  if (path === "") return "needs a path in the upload, such as lib/util.circom"
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(path)) return `the path ${JSON.stringify(path)} holds control characters`
  if (path.includes("\\")) return `the path ${JSON.stringify(path)} uses \\; separate directories with /`
  if (path.startsWith("/") || /^[A-Za-z]:/.test(path)) return `the path ${JSON.stringify(path)} is absolute; give it relative to the upload`
  if (path.split("/").some((segment) => segment === "" || segment === "." || segment === "..")) {
    return `the path ${JSON.stringify(path)} has an empty, . or .. segment; give its place inside the upload`
  }
  if (path.length > 255) return "the path is over 255 characters"
  return undefined
}

/**
 * The paths of an upload that lie inside another of its paths, a file (`lib.circom/x.circom` beside
 * `lib.circom`), each with why: no folder holds a file and a folder of one name, so such an upload
 * cannot be laid out to build (it failed as an internal error when the build made its folders).
 * The rule for every way in, as `uploadPathProblem` is.
 */
export const uploadPathConflicts = (paths: Iterable<string>): Array<{ readonly path: string; readonly message: string }> => {
  const files = new Set(paths)
  const conflicts: Array<{ readonly path: string; readonly message: string }> = []
  for (const path of files) {
    for (let at = path.indexOf("/"); at !== -1; at = path.indexOf("/", at + 1)) {
      const folder = path.slice(0, at)
      if (!files.has(folder)) continue
      conflicts.push({ path, message: `the path ${JSON.stringify(path)} is inside ${JSON.stringify(folder)}, which is a file, not a folder` })
      break
    }
  }
  return conflicts
}

/** Every path's problem, then every conflict between paths, as details of `part`. */
const pathDetails = (paths: ReadonlyArray<string>, part: string): Array<{ path: string; message: string }> => {
  const details = paths.flatMap((path) => {
    const problem = uploadPathProblem(path)
    return problem === undefined ? [] : [{ path: part, message: problem }]
  })
  return details.length > 0 ? details : uploadPathConflicts(paths).map(({ message }) => ({ path: part, message }))
}

/** Why sample inputs are not a JSON object (a proof's `inputs`), or undefined. */
const sampleInputsProblem = (bytes: Uint8Array): string | undefined => {
  let value: unknown
  try {
    value = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes))
  } catch (e) {
    return `must be JSON: ${e instanceof Error ? e.message : String(e)}`
  }
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? undefined
    : "must be a JSON object of the circuit's inputs by name, as a proof's inputs are"
}

/**
 * Refuses an upload whose parts do not make a build input: every path acceptable
 * (`uploadPathProblem`), none inside another that is a file (`uploadPathConflicts`), and the main
 * file one of the uploaded files; sample inputs a JSON object.
 */
export const checkBuildInput = (source: UploadSource): Effect.Effect<void, InvalidRequest> => {
  if (source.kind === "noir_program") return Effect.void
  if (source.kind === "noir") {
    const details = pathDetails(Object.keys(source.files), "noir_sources")
    if (details.length === 0 && !Object.hasOwn(source.files, "Nargo.toml")) {
      details.push({ path: "noir_sources", message: "a Noir upload needs its Nargo.toml (a part whose filename is Nargo.toml)" })
    }
    if (details.length === 0 && !Object.hasOwn(source.files, "src/main.nr")) {
      details.push({ path: "noir_sources", message: "a Noir upload needs src/main.nr, the program's entry point" })
    }
    return details.length === 0 ? Effect.void : Effect.fail(invalidRequest(details))
  }
  if (source.kind !== "circom") {
    const problem = source.sample_inputs === undefined ? undefined : sampleInputsProblem(source.sample_inputs)
    return problem === undefined ? Effect.void : Effect.fail(invalidRequest([{ path: "sample_inputs", message: problem }]))
  }
  const details = pathDetails(Object.keys(source.files), "sources")
  if (details.length === 0 && !Object.hasOwn(source.files, source.main)) {
    details.push({ path: "main", message: `the main file ${JSON.stringify(source.main)} is not among the uploaded files` })
  }
  return details.length === 0 ? Effect.void : Effect.fail(invalidRequest(details))
}

/**
 * Stores every uploaded file content-addressed (a staged one by publishing it, in the caller's
 * transaction) and describes the upload by digest.
 */
export const storeSource = (
  artifacts: ArtifactsRepo["Type"],
  source: UploadSource
): Effect.Effect<CircuitSource, StorageError> => {
  if (source.kind === "noir_program") {
    return Effect.map(artifacts.put(source.program), (program): CircuitSource => ({ kind: "noir_program", program }))
  }
  if (source.kind === "noir") {
    return Effect.map(
      Effect.forEach(Object.entries(source.files), ([path, bytes]) => Effect.map(artifacts.put(bytes), (digest) => [path, digest] as const)),
      (entries): CircuitSource => ({ kind: "noir", files: Object.fromEntries(entries) as Record<string, Digest> })
    )
  }
  if (source.kind === "circom") {
    return Effect.map(
      Effect.forEach(Object.entries(source.files), ([path, bytes]) => Effect.map(artifacts.put(bytes), (digest) => [path, digest] as const)),
      (entries): CircuitSource => ({
        kind: "circom",
        main: source.main,
        files: Object.fromEntries(entries) as Record<string, Digest>,
        ...systemOf(source)
      })
    )
  }
  const store = (file: UploadedArtifact) => (file instanceof Uint8Array ? artifacts.put(file) : artifacts.publish(file))
  return Effect.gen(function*() {
    return {
      kind: "artifacts",
      wasm: yield* store(source.wasm),
      zkey: yield* store(source.zkey),
      sym: yield* store(source.sym),
      r1cs: source.r1cs === null ? null : yield* store(source.r1cs),
      ...(source.sample_inputs === undefined ? {} : { sample_inputs: yield* artifacts.put(source.sample_inputs) }),
      ...systemOf(source)
    } satisfies CircuitSource
  })
}

/**
 * An upload back from storage, for its build: the large prebuilt artifacts (wasm, zkey, r1cs) as
 * stored files to stream, the rest as bytes. Fails with the first digest that is missing.
 */
export const loadSource = <E>(
  artifacts: ArtifactsRepo["Type"],
  source: CircuitSource,
  missing: (digest: Digest) => E
): Effect.Effect<BuildInput, E | StorageError> => {
  const load = (digest: Digest) =>
    Effect.flatMap(artifacts.get(digest), (found) => (found._tag === "Some" ? Effect.succeed(found.value) : Effect.fail(missing(digest))))
  const stored = (digest: Digest) =>
    Effect.flatMap(artifacts.read(digest), (found) =>
      found._tag === "Some"
        ? Effect.succeed<StoredBuildFile>({ digest, size: found.value.size, chunks: found.value.chunks })
        : Effect.fail(missing(digest)))
  if (source.kind === "noir_program") {
    return Effect.map(load(source.program), (program): BuildInput => ({ kind: "noir_program", program }))
  }
  if (source.kind === "noir") {
    return Effect.map(
      Effect.forEach(Object.entries(source.files), ([path, digest]) => Effect.map(load(digest), (bytes) => [path, bytes] as const)),
      (entries): BuildInput => ({ kind: "noir", files: Object.fromEntries(entries) })
    )
  }
  if (source.kind === "circom") {
    return Effect.map(
      Effect.forEach(Object.entries(source.files), ([path, digest]) => Effect.map(load(digest), (bytes) => [path, bytes] as const)),
      (entries): BuildInput => ({ kind: "circom", main: source.main, files: Object.fromEntries(entries), ...systemOf(source) })
    )
  }
  return Effect.gen(function*() {
    return {
      kind: "artifacts",
      wasm: yield* stored(source.wasm),
      zkey: yield* stored(source.zkey),
      sym: yield* load(source.sym),
      r1cs: source.r1cs === null ? null : yield* stored(source.r1cs),
      ...(source.sample_inputs === undefined ? {} : { sample_inputs: yield* load(source.sample_inputs) }),
      ...systemOf(source)
    } satisfies BuildInput
  })
}
