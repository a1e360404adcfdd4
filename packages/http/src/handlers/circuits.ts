import {
  type AccountId,
  ArtifactDownloads,
  type BuildInput,
  CircuitCompiler,
  CircuitNotFound,
  CircuitNotReady,
  Circuits,
  CircuitsConfig,
  type CreateCircuitInput,
  type ErrorDetail,
  InternalError,
  InvalidRequest,
  provingSystemFor,
  type UploadSource,
  uploadPathProblem
} from "@mzk/core"
import { Effect, Either, Option } from "effect"
import type { CircuitUpload } from "../api/circuits.js"
import type { StagedFile, UploadedFile } from "../api/upload.js"
import { type ArchiveLimits, archiveSource, MAX_UPLOAD_FILES, readArchive } from "@mzk/proving/archive"
import { implement } from "./handler.js"

type Upload = typeof CircuitUpload.Type

const CIRCOM_PARTS = ["main", "sources"] as const
const NOIR_PARTS = ["noir_sources", "noir_program"] as const
const PREBUILT_PARTS = ["wasm", "zkey", "sym", "r1cs", "sample_inputs"] as const
const REQUIRED_PREBUILT = ["wasm", "zkey", "sym"] as const

/**
 * The media types a part may declare: what browsers, curl and HTTP libraries send for such a file
 * (`application/octet-stream` for an extension they do not know; `text/plain`, RFC 7578's default,
 * where a part declares none). Anything else is most likely the wrong file in the wrong part.
 */
const isText = (type: string) => type.startsWith("text/")
const ACCEPTED: Record<(typeof CIRCOM_PARTS)[number] | (typeof NOIR_PARTS)[number] | (typeof PREBUILT_PARTS)[number], readonly [(type: string) => boolean, string]> = {
  main: [(type) => isText(type) || type === "application/octet-stream", "a text type or application/octet-stream"],
  sources: [(type) => isText(type) || type === "application/octet-stream", "a text type or application/octet-stream"],
  noir_sources: [(type) => isText(type) || type === "application/octet-stream" || type === "application/toml", "a text type or application/octet-stream"],
  noir_program: [(type) => ["application/json", "application/octet-stream", "text/plain"].includes(type), "application/json"],
  wasm: [(type) => ["application/wasm", "application/octet-stream", "text/plain"].includes(type), "application/wasm or application/octet-stream"],
  zkey: [(type) => ["application/octet-stream", "text/plain"].includes(type), "application/octet-stream"],
  sym: [(type) => ["application/octet-stream", "text/plain"].includes(type), "text/plain or application/octet-stream"],
  r1cs: [(type) => ["application/octet-stream", "text/plain"].includes(type), "application/octet-stream"],
  sample_inputs: [(type) => ["application/json", "application/octet-stream", "text/plain"].includes(type), "application/json"]
}

/** A part's filename is its path in the upload: it must have one, and the core's rule for paths holds. */
const pathProblem = (filename: string | undefined): string | undefined =>
  filename === undefined || filename === ""
    ? "needs a filename: its path in the upload, such as lib/util.circom"
    : uploadPathProblem(filename)

const refuse = (message: string, details: ReadonlyArray<ErrorDetail>) => Effect.fail(new InvalidRequest({ message, details }))

/** The upload's fields besides its files: one place for every kind of upload, so none of them loses a field. */
const fieldsOf = (upload: Upload) => ({
  name: upload.name,
  ...(upload.description === undefined ? {} : { description: upload.description }),
  ...(upload.metadata === undefined ? {} : { metadata: upload.metadata }),
  ...(upload.proving_system === undefined ? {} : { proving_system: upload.proving_system })
})

/** The parts an archive stands in for, besides `main`, which names the main file in it. */
const NOT_WITH_ARCHIVE = ["sources", ...NOIR_PARTS, ...PREBUILT_PARTS] as const

/**
 * An archive upload (`archive`, with `main` as a text field naming a path in it, or a Noir project
 * without) as a build input: its files are what separate parts would have been, so the same
 * rules and everything after this apply; or 400 naming the part, and the archive's entry, at fault.
 */
const archiveInputOf = (upload: Upload, archive: UploadedFile, limits: ArchiveLimits): Effect.Effect<CreateCircuitInput, InvalidRequest> => {
  const others = NOT_WITH_ARCHIVE.filter((part) => upload[part] !== undefined)
  if (others.length > 0) {
    return refuse(
      "An archive holds the upload's sources: it cannot be sent with sources, Noir parts or prebuilt artifacts",
      others.map((part) => ({ path: part, message: "cannot be sent with archive" }))
    )
  }
  const main = upload.main
  if (main !== undefined && typeof main !== "string") {
    return refuse("With an archive, main names the main file inside it", [
      { path: "main", message: "with archive, a text field (no filename) naming the main file's path inside the archive" }
    ])
  }
  return readArchive(archive.bytes, limits).pipe(
    Effect.flatMap((files) => archiveSource(files, main)),
    Effect.map((source) => ({ ...fieldsOf(upload), source }))
  )
}

/**
 * The upload's parts as a build input, or 400 `invalid_request` naming each part at fault: one kind
 * (circom sources, an archive of them, or prebuilt artifacts) with its required parts, each of an
 * acceptable media type, sources under distinct, relative paths.
 */
export const buildInputOf = (upload: Upload, limits: ArchiveLimits): Effect.Effect<CreateCircuitInput, InvalidRequest> => {
  if (upload.archive !== undefined) return archiveInputOf(upload, upload.archive, limits)
  if (typeof upload.main === "string") {
    return refuse("main is the main circom file", [
      { path: "main", message: "a file part: send it with a filename (a text field main names a path in an archive, with archive)" }
    ])
  }
  const circom = CIRCOM_PARTS.filter((part) => upload[part] !== undefined)
  const prebuilt = PREBUILT_PARTS.filter((part) => upload[part] !== undefined)
  const noir = NOIR_PARTS.filter((part) => upload[part] !== undefined)
  if (noir.length > 0) return noirInputOf(upload, noir, [...circom, ...prebuilt])
  if (circom.length > 0 && prebuilt.length > 0) {
    return refuse(
      "An upload is either circom sources (main, sources) or prebuilt artifacts (wasm, zkey, sym, r1cs, sample_inputs), not both",
      prebuilt.map((part) => ({ path: part, message: `cannot be sent with ${circom.join(" and ")}` }))
    )
  }
  if (circom.length === 0 && prebuilt.length === 0) {
    return refuse("The upload holds no circuit: send main (and its sources), or wasm, zkey and sym, or a Noir program", [
      { path: "main", message: "missing: the main circom file (or send the prebuilt wasm, zkey and sym, or noir_sources)" }
    ])
  }
  const details: Array<ErrorDetail> = []
  const typed = (part: keyof typeof ACCEPTED, path: string, file: UploadedFile | StagedFile) => {
    const [accepts, accepted] = ACCEPTED[part]
    if (!accepts(file.contentType)) details.push({ path, message: `must be sent as ${accepted}, not ${file.contentType}` })
  }
  const fields = fieldsOf(upload)
  if (circom.length > 0) {
    const main = upload.main
    if (main === undefined) details.push({ path: "main", message: "missing: the main circom file, which the sources are included from" })
    // Without a prototype, a file named `__proto__` is a file like any other.
    const files: Record<string, Uint8Array> = Object.create(null)
    const add = (part: "main" | "sources", path: string, file: UploadedFile) => {
      typed(part, path, file)
      const problem = pathProblem(file.filename)
      if (problem !== undefined) return void details.push({ path, message: problem })
      if (Object.hasOwn(files, file.filename!)) {
        return void details.push({ path, message: `the path ${JSON.stringify(file.filename)} is sent more than once` })
      }
      files[file.filename!] = file.bytes
    }
    if (main !== undefined) add("main", "main", main)
    upload.sources?.forEach((file, i) => add("sources", `sources.${i}`, file))
    if (details.length > 0) return refuse("The upload's circom sources are not acceptable", details)
    const source: BuildInput = { kind: "circom", main: main!.filename!, files }
    return Effect.succeed({ ...fields, source })
  }
  for (const part of REQUIRED_PREBUILT) {
    if (upload[part] === undefined) details.push({ path: part, message: `missing: a prebuilt upload sends wasm, zkey and sym` })
  }
  for (const part of prebuilt) typed(part, part, upload[part]!)
  if (details.length > 0) return refuse("The upload's prebuilt artifacts are not acceptable", details)
  // The large parts arrive staged in artifact storage; `Circuits.create` publishes them.
  const source: UploadSource = {
    kind: "artifacts",
    wasm: upload.wasm!.staged,
    zkey: upload.zkey!.staged,
    sym: upload.sym!.staged,
    r1cs: upload.r1cs?.staged ?? null,
    ...(upload.sample_inputs === undefined ? {} : { sample_inputs: upload.sample_inputs.bytes })
  }
  return Effect.succeed({ ...fields, source })
}

/**
 * A Noir upload (sources or a prebuilt program, not both, and nothing of circom's) as a build
 * input, or 400 naming each part at fault.
 */
const noirInputOf = (
  upload: Upload,
  noir: ReadonlyArray<(typeof NOIR_PARTS)[number]>,
  others: ReadonlyArray<string>
): Effect.Effect<CreateCircuitInput, InvalidRequest> => {
  if (others.length > 0) {
    return refuse(
      "A Noir upload (noir_sources or noir_program) cannot also hold circom sources or prebuilt circom artifacts",
      others.map((part) => ({ path: part, message: `cannot be sent with ${noir.join(" and ")}` }))
    )
  }
  if (noir.length > 1) {
    return refuse("A Noir upload is its sources or its prebuilt program, not both", [
      { path: "noir_program", message: "cannot be sent with noir_sources" }
    ])
  }
  const details: Array<ErrorDetail> = []
  // proving_system goes on to the core, which refuses anything but ultra_honk for a Noir program.
  const fields = fieldsOf(upload)
  const typed = (part: (typeof NOIR_PARTS)[number], path: string, file: UploadedFile) => {
    const [accepts, accepted] = ACCEPTED[part]
    if (!accepts(file.contentType)) details.push({ path, message: `must be sent as ${accepted}, not ${file.contentType}` })
  }
  if (upload.noir_program !== undefined) {
    typed("noir_program", "noir_program", upload.noir_program)
    if (details.length > 0) return refuse("The upload's Noir program is not acceptable", details)
    return Effect.succeed({ ...fields, source: { kind: "noir_program", program: upload.noir_program.bytes } })
  }
  const files: Record<string, Uint8Array> = Object.create(null)
  upload.noir_sources?.forEach((file, i) => {
    const path = `noir_sources.${i}`
    typed("noir_sources", path, file)
    const problem = pathProblem(file.filename)
    if (problem !== undefined) return void details.push({ path, message: problem })
    if (Object.hasOwn(files, file.filename!)) {
      return void details.push({ path, message: `the path ${JSON.stringify(file.filename)} is sent more than once` })
    }
    files[file.filename!] = file.bytes
  })
  if (details.length > 0) return refuse("The upload's Noir sources are not acceptable", details)
  return Effect.succeed({ ...fields, source: { kind: "noir", files } })
}

const notFound = (name: string) =>
  new CircuitNotFound({ message: `No circuit ${JSON.stringify(name)}; GET /api/v1/circuits lists the ones this account can use` })

export const CircuitsHandlers = Effect.gen(function*() {
  const circuits = yield* Circuits
  const downloads = yield* ArtifactDownloads
  const compiler = yield* CircuitCompiler
  const { maxUploadBytes } = yield* CircuitsConfig
  // An archive's files are held to what the same files sent as parts would be.
  const archiveLimits: ArchiveLimits = { maxBytes: maxUploadBytes, maxFiles: MAX_UPLOAD_FILES }
  const find = (accountId: AccountId, name: string) =>
    Effect.flatMap(circuits.get(accountId, name), Option.match({ onNone: () => Effect.fail(notFound(name)), onSome: Effect.succeed }))
  return implement("circuits", {
    create: ({ payload, principal }) => Effect.flatMap(buildInputOf(payload, archiveLimits), (input) => circuits.create(principal.account_id, input)),
    list: ({ principal }) => Effect.map(circuits.list(principal.account_id), (list) => ({ circuits: list })),
    get: ({ path, principal }) => find(principal.account_id, path.name),
    versions: ({ path, principal, urlParams }) =>
      Effect.map(circuits.versions(principal.account_id, path.name, urlParams), (page) => ({
        versions: page.items,
        total: page.total,
        has_more: page.has_more
      })),
    remove: ({ path, principal }) => circuits.remove(principal.account_id, path.name),
    artifact: ({ path, principal, urlParams }) => downloads.get(principal.account_id, path.name, path.kind, urlParams.proving_system),
    verifier: ({ path, principal, urlParams }) =>
      Effect.gen(function*() {
        const found = yield* find(principal.account_id, path.name)
        if (found.status !== "ready") {
          return yield* new CircuitNotReady({ message: `Circuit ${JSON.stringify(found.name)} is ${found.status}; only a ready circuit has a verifier` })
        }
        // The same rule as a proof request's: one of the circuit's systems, its own by default.
        const system = provingSystemFor(found, urlParams.proving_system)
        if (Either.isLeft(system)) return yield* new InvalidRequest({ message: "The circuit has no key for that system", details: system.left })
        const circuit = Option.getOrElse(circuits.asSystem(found, system.right), () => found)
        return yield* compiler.solidityVerifier(circuit.verification_key).pipe(
          Effect.tapError((failure) => Effect.logError(`verifier.sol of ${circuit.name}: ${failure.code}: ${failure.message}`)),
          Effect.mapError(() => new InternalError({ message: "The verifier contract could not be made" }))
        )
      })
  })
})
