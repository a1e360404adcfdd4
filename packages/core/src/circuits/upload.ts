import { Effect, Schema } from "effect"
import { decodeInput, invalidRequest } from "../kernel/decode.js"
import type { InvalidRequest, StorageError } from "../kernel/errors.js"
import { StoredText } from "../kernel/text.js"
import { CircuitName, type CircuitSource, type Digest } from "./circuit.js"
import type { BuildInput } from "./compiler.js"
import type { ArtifactsRepo } from "./repo.js"

/** The fields of an upload besides its files, checked as every stored text is. */
const UploadFields = Schema.Struct({
  name: CircuitName,
  description: Schema.optionalWith(
    StoredText.pipe(Schema.maxLength(1024, { message: () => "description must be at most 1024 characters" })),
    { exact: true }
  )
})
export const decodeUploadFields = decodeInput(UploadFields)

/**
 * Refuses an upload whose parts do not make a build input: the main file must be one of the
 * uploaded files. Paths are the upload's own; that they stay inside it is the compiler's check,
 * which sees the includes too.
 */
export const checkBuildInput = (source: BuildInput): Effect.Effect<void, InvalidRequest> =>
  source.kind === "circom" && !Object.hasOwn(source.files, source.main)
    ? Effect.fail(invalidRequest([{ path: "main", message: `the main file ${JSON.stringify(source.main)} is not among the uploaded files` }]))
    : Effect.void

/** Stores every uploaded file content-addressed and describes the upload by digest. */
export const storeSource = (
  artifacts: ArtifactsRepo["Type"],
  source: BuildInput
): Effect.Effect<CircuitSource, StorageError> => {
  if (source.kind === "circom") {
    return Effect.map(
      Effect.forEach(Object.entries(source.files), ([path, bytes]) => Effect.map(artifacts.put(bytes), (digest) => [path, digest] as const)),
      (entries): CircuitSource => ({ kind: "circom", main: source.main, files: Object.fromEntries(entries) as Record<string, Digest> })
    )
  }
  return Effect.gen(function*() {
    return {
      kind: "artifacts",
      wasm: yield* artifacts.put(source.wasm),
      zkey: yield* artifacts.put(source.zkey),
      sym: yield* artifacts.put(source.sym),
      r1cs: source.r1cs === null ? null : yield* artifacts.put(source.r1cs)
    } satisfies CircuitSource
  })
}

/** An upload's bytes back from storage, for its build; fails with the first digest that is missing. */
export const loadSource = <E>(
  artifacts: ArtifactsRepo["Type"],
  source: CircuitSource,
  missing: (digest: Digest) => E
): Effect.Effect<BuildInput, E | StorageError> => {
  const load = (digest: Digest) =>
    Effect.flatMap(artifacts.get(digest), (found) => (found._tag === "Some" ? Effect.succeed(found.value) : Effect.fail(missing(digest))))
  if (source.kind === "circom") {
    return Effect.map(
      Effect.forEach(Object.entries(source.files), ([path, digest]) => Effect.map(load(digest), (bytes) => [path, bytes] as const)),
      (entries): BuildInput => ({ kind: "circom", main: source.main, files: Object.fromEntries(entries) })
    )
  }
  return Effect.gen(function*() {
    return {
      kind: "artifacts",
      wasm: yield* load(source.wasm),
      zkey: yield* load(source.zkey),
      sym: yield* load(source.sym),
      r1cs: source.r1cs === null ? null : yield* load(source.r1cs)
    } satisfies BuildInput
  })
}
