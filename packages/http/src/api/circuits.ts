import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import {
  ArtifactKind,
  CircuitError,
  CircuitId,
  CircuitInput,
  CircuitName,
  CircuitStatus,
  ListCircuitVersionsQuery,
  MetadataField,
  MetadataInput,
  ProvingSystem,
  Timestamp
} from "@mzk/core"
import { Option, Schema } from "effect"
import { Authentication, idempotent, requires } from "./annotations.js"
import {
  CircuitInUseWire,
  CircuitLimitReachedWire,
  CircuitNameTakenWire,
  CircuitNotFoundWire,
  CircuitNotReadyWire,
  CompilationLimitReachedWire,
  RangeNotSatisfiableWire,
  SetupUnavailableWire,
  UploadTooLargeWire
} from "./errors.js"
import { MAX_UPLOAD_FILES } from "@mzk/proving/archive"
import { DownloadedFile } from "./download.js"
import { StagedFile, UploadedFile } from "./upload.js"

/** A circuit as clients see it: never its artifacts' digests nor its sources. */
export const Circuit = Schema.Struct({
  name: Schema.String.annotations({ description: "The circuit's name: the `type` of its proofs" }),
  version: Schema.Int.annotations({
    description: "Which upload of `name` this is: 1, 2, … in the order the account uploaded them, never reused (a removed " +
      "version keeps its number). `name@version` names exactly it, as a proof's `type` or in a path; built-in circuits: 1"
  }),
  id: Schema.NullOr(CircuitId).annotations({
    description: "The version's own id (`cir_…`), the cursor of `GET /circuits/{name}/versions`; null for a built-in circuit"
  }),
  owner: Schema.String.annotations({ description: "`builtin`, or the id of the account that uploaded it" }),
  status: CircuitStatus,
  error: Schema.NullOr(CircuitError).annotations({ description: "Why the build failed; `file` and `line` locate a compiler error" }),
  description: Schema.NullOr(Schema.String),
  constraints: Schema.NullOr(Schema.Int).annotations({ description: "R1CS constraints (a Noir program: its UltraHonk gates before padding); null until the circuit is ready" }),
  inputs: Schema.Array(CircuitInput).annotations({
    description: "The input signals of `main`; an array input takes nested JSON arrays, outermost dimension first"
  }),
  public_signals: Schema.Array(Schema.String).annotations({
    description: "Public signal names in the order proofs list them: outputs, then public inputs (`x[0]`, `x[1][0]` for arrays)"
  }),
  development_only: Schema.Boolean.annotations({
    description: "Built with a trusted setup nobody can rely on (a development powers-of-tau): for testing only"
  }),
  proving_system: ProvingSystem.annotations({
    description: "The system the circuit is set up for, and its proofs made with unless a request names another of `proving_systems`"
  }),
  proving_systems: Schema.Array(ProvingSystem).annotations({
    description: "Every system a proof request may name for this circuit: an uploaded circuit has its one; a built-in circuit " +
      "may have keys for groth16, plonk and fflonk"
  }),
  created_at: Timestamp,
  metadata: MetadataField.annotations({ description: "Your own key-value pairs, set at upload; `{}` for built-in circuits" })
}).annotations({ identifier: "Circuit" })

export const CircuitWithKey = Schema.Struct({
  ...Circuit.fields,
  verification_key: Schema.Unknown.annotations({
    description: "The verification key of `proving_system` as snarkjs exports it (`ultra_honk`: `{protocol, curve, vk}`, vk " +
      "bb.js's key bytes as 0x-hex, what its UltraHonkBackend and HonkVerifier take); null until ready"
  })
}).annotations({ identifier: "CircuitWithKey" })

export const CircuitList = Schema.Struct({
  circuits: Schema.Array(Circuit).annotations({ description: "The built-in circuits, then each of the account's names at its newest version" })
}).annotations({ identifier: "CircuitList" })

export const CircuitVersionList = Schema.Struct({
  versions: Schema.Array(Circuit).annotations({ description: "Live versions of the name, newest (highest `version`) first" }),
  total: Schema.Int,
  has_more: Schema.Boolean
}).annotations({ identifier: "CircuitVersionList" })

const file = (description: string) => Schema.optional(UploadedFile.annotations({ description }))

/** A prebuilt artifact's part: written to storage as it arrives, never held whole (a 2^20 zkey is 0.5–0.7 GB). */
const stagedFile = (description: string) => Schema.optional(StagedFile.annotations({ description }))

/**
 * `POST /circuits`: circom sources (`main` + `sources`, or an `archive` with `main` naming a path
 * in it), a Noir program, or prebuilt artifacts (`wasm` + `zkey` + `sym`, `r1cs` and
 * `sample_inputs` optional).
 */
export const CircuitUpload = HttpApiSchema.Multipart(
  Schema.Struct({
    name: Schema.propertySignature(CircuitName).annotations({
      description: "1 to 64 letters, digits, `_` or `-`: the `type` of the circuit's proofs. A name the account already " +
        "has gets its next version"
    }),
    description: Schema.optional(Schema.String.annotations({ description: "At most 1024 characters" })),
    metadata: Schema.optional(
      Schema.parseJson(MetadataInput).annotations({
        description: "A JSON object of your own key-value pairs, as `metadata` on every other create (`{\"order\":\"1\"}`): " +
          "at most 50 keys of at most 40 characters, string values of at most 500"
      })
    ),
    proving_system: Schema.optional(ProvingSystem.annotations({
      description: "Circom sources: the system to set up for, `groth16` (default: a fresh phase-2 contribution on the server's " +
        "powers of tau), `plonk` or `fflonk` (the powers of tau alone, no per-circuit ceremony). Prebuilt: the system the zkey " +
        "must be of (default: what its header says); a zkey of another system is 400. Noir programs (`noir_sources`, `noir_program`): `ultra_honk`, implied; any other is 400"
    })),
    main: Schema.optional(
      Schema.Union(UploadedFile, Schema.String).annotations({
        description: "Circom sources: the main circuit file, its filename its path in the upload (`circuit.circom`). With " +
          "`archive`: a text field (no filename) naming the main file's path inside the archive (`circuits/main.circom`)"
      })
    ),
    sources: Schema.optional(
      Schema.Array(UploadedFile).annotations({
        description: "Circom sources: every other file `main` includes, repeated; each filename its relative path " +
          "(`lib/util.circom`), none inside a path that is a file (`lib.circom` and `lib.circom/x.circom` cannot both be sent)"
      })
    ),
    archive: file(
      "Sources as one archive instead of `main` and `sources` (or `noir_sources`): a `.zip` or a gzip'd tar (`.tar.gz`, " +
        "`.tgz`), told apart by its first bytes. Its regular files are the upload's files, under the same rules as parts: " +
        "at most " + String(MAX_UPLOAD_FILES) + " files, the upload limit on their total once uncompressed, relative paths " +
        "(a leading `./` is dropped), none inside a path that is a file (`lib.circom` beside `lib.circom/x.circom`), names " +
        "in UTF-8 (as a zip flags them; a tar's always) without a NUL, no links, devices or repeated paths; folders are " +
        "skipped. `main` names the main " +
        "circom file in it; without `main`, an archive with `Nargo.toml` at its root is a Noir project (its `Nargo.toml` " +
        "and `src/**/*.nr` are kept). Where every file lies in one top-level folder (`tar czf c.tgz mycircuit/`, GitHub's " +
        "tarballs), `main` (or `Nargo.toml`) may be named inside it, and then that folder is dropped from every path"
    ),
    noir_sources: Schema.optional(
      Schema.Array(UploadedFile).annotations({
        description: "A Noir program (proven with `ultra_honk`): its `Nargo.toml` and every `.nr` file under `src/` " +
          "(`src/main.nr` and the modules it declares), repeated, each filename its path in the project. A `bin` package " +
          "without `[dependencies]` (they would be fetched from the network)"
      })
    ),
    noir_program: file(
      "A prebuilt Noir program (proven with `ultra_honk`): the JSON `nargo compile` writes (`target/<name>.json`), from " +
        "noirc of the version the server names in a refusal"
    ),
    wasm: stagedFile("Prebuilt: the witness calculator circom wrote (`--wasm`)"),
    zkey: stagedFile("Prebuilt: the bn128 proving key (snarkjs `.zkey`) of groth16, plonk or fflonk; its header names the system"),
    sym: stagedFile("Prebuilt: the signal names circom wrote (`--sym`)"),
    r1cs: stagedFile(
      "Prebuilt, optional: the constraint system circom wrote (`--r1cs`). The zkey's constraints are compared with it, " +
        "and it stands in for `sample_inputs` where the all-zero input fails the circuit"
    ),
    sample_inputs: file(
      "Prebuilt, optional: one input the circuit accepts, as the JSON object of a proof's `inputs` (the `input.json` a witness " +
        "was computed from). The build proves it with the zkey and verifies the proof; without it the all-zero input is tried"
    )
  }),
  { maxParts: Option.some(MAX_UPLOAD_FILES), maxFieldSize: 64 * 1024 }
)

/** A path's circuit: `name` or `name@N` (version N), as a proof's `type`. */
const circuitName = HttpApiSchema.param(
  "name",
  Schema.String.annotations({
    description: "The circuit's name, or `name@N` for exactly its version N (a positive integer; names cannot hold `@`)"
  })
)
/** Which file of a circuit a download sends. */
const artifactKind = HttpApiSchema.param(
  "kind",
  ArtifactKind.annotations({ description: "The file: `wasm`, `zkey`, `verification_key`, `r1cs`, `sym` or `noir_program`" })
)
/** A name alone: every version of it. */
const bareName = HttpApiSchema.param("name", Schema.String.annotations({ description: "The circuit's name, without `@N`" }))

export class CircuitsGroup extends HttpApiGroup.make("circuits")
  .add(
    HttpApiEndpoint.post("create", "/circuits")
      .setPayload(CircuitUpload)
      .addSuccess(Circuit, { status: 202 })
      .addError(SetupUnavailableWire)
      .addError(CircuitNameTakenWire)
      .addError(CircuitLimitReachedWire)
      .addError(CompilationLimitReachedWire)
      .addError(UploadTooLargeWire)
      .pipe(requires("circuits:write"), idempotent)
      .annotate(
        OpenApi.Description,
        "Upload a circuit as `multipart/form-data`: a `name` field (optionally `description`) and either circom sources " +
          "(the file part `main`, plus any files it includes as repeated `sources` parts, each filename its relative path, " +
          "or all of them as one `archive`, a .zip or .tar.gz, with the text field `main` naming the main file's path in it) " +
          "or prebuilt artifacts (`wasm`, `zkey` and `sym`, optionally `r1cs` and `sample_inputs`), or a Noir program " +
          "(`noir_sources`: `Nargo.toml` and `src/*.nr`, or `noir_program`: the program JSON nargo writes), compiled with " +
          "noir_wasm and proven with UltraHonk (`proving_system` `ultra_honk`; its inputs are the program's parameters by " +
          "name, its public signals its public parameters then its public return value). A Noir upload to a server without " +
          "an UltraHonk CRS is 409 `setup_unavailable`. Only the files `main` " +
          "includes, directly or through other uploaded files, are compiled; any other `sources` part is ignored. Includes resolve " +
          "as circom resolves them: from the including file's folder among the uploaded files, then from circomlib " +
          "(`circomlib/circuits/…`); one that finds neither fails the build with `compile_error` at its file and line. Answers " +
          "202 with the circuit `compiling` (`development_only` already says whether the server's setup is a development one); " +
          "the build ends `ready` or `failed`, announced by the `circuit.ready` or `circuit.failed` event. Uploading a name the " +
          "account already has makes its next version (`version` 1, 2, …; a number is never reused, removed versions included); " +
          "the earlier versions stay live, and `type: \"name\"` proves with the newest ready one until the new one is. When the " +
          "name's newest version `failed`, the upload replaces it (the failed version is removed) and still takes the next " +
          "number. Every live version counts against the circuits-per-account limit (409 `circuit_limit_reached`). Built-in " +
          "names are 409 `circuit_name_taken`. Circom sources sent to a server without a powers of tau " +
          "are 409 `setup_unavailable`, with nothing stored. " +
          "Prebuilt parts are stored as they arrive, so the upload limit (413 `upload_too_large`) is what bounds their size: " +
          "a key of 2^20 constraints (0.5–0.7 GB) needs a server whose limit allows it. " +
          "Prebuilt artifacts are checked to describe one circuit before it is `ready`: every point of the zkey (G1 on the curve, " +
          "G2 in its subgroup; else `invalid_artifacts`), the zkey's constraints against the `r1cs` when sent, and one proof of a " +
          "witness the wasm computes, from `sample_inputs` or else the all-zero input, made with the zkey and verified with its key " +
          "(else `artifact_mismatch`). An upload that cannot be checked (the all-zero input fails the circuit, and neither " +
          "`sample_inputs` nor the `r1cs` was sent) fails with `sample_inputs_required`. Such uploads used to be accepted " +
          "unchecked; they are refused because a zkey of another circuit with as many wires then made a `ready` circuit whose " +
          "every proof failed, while sending the input the key was tried with, or the r1cs it was set up from, costs nothing."
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/circuits")
      .addSuccess(CircuitList)
      .pipe(requires("circuits:read"))
      .annotate(OpenApi.Description, "The circuits the account can prove with: the built-in ones, then its own, newest first, " +
          "each name once, at its newest version (`GET /circuits/{name}/versions` lists the others). A whole list, not paged: the " +
          "circuits-per-account limit bounds it. Not public (it names the account's own circuits): it needs a key with `circuits:read`.")
  )
  .add(
    HttpApiEndpoint.get("get")`/circuits/${circuitName}`
      .addSuccess(CircuitWithKey)
      .addError(CircuitNotFoundWire)
      .pipe(requires("circuits:read"))
      .annotate(OpenApi.Description, "One circuit by name, with its verification key: whoever the account gives that key to can verify its proofs " +
          "offline, without this server or a key. `{name}` is the newest version, whatever its status (so the build of what was " +
          "just uploaded shows); `{name}@N` exactly version N (404 `circuit_not_found` naming `name@N` when there is no such " +
          "live version). Built-in circuits have version 1.")
  )
  .add(
    HttpApiEndpoint.get("versions")`/circuits/${bareName}/versions`
      .setUrlParams(ListCircuitVersionsQuery)
      .addSuccess(CircuitVersionList)
      .addError(CircuitNotFoundWire)
      .pipe(requires("circuits:read"))
      .annotate(
        OpenApi.Description,
        "Every live version of one of the account's circuits, newest first, paged as every list: `limit`, `starting_after` " +
          "(older versions) or `ending_before` (newer ones), each cursor a version's `id`. A built-in circuit has its one " +
          "version. 404 `circuit_not_found` when the account has no live version of the name; `{name}@N` here is 400."
      )
  )
  .add(
    HttpApiEndpoint.del("remove")`/circuits/${circuitName}`
      .addSuccess(HttpApiSchema.NoContent)
      .addError(CircuitNotFoundWire)
      .addError(CircuitInUseWire)
      .pipe(requires("circuits:write"))
      .annotate(
        OpenApi.Description,
        "Remove one version of the account's circuit (`{name}@N`), or every version of the name (`{name}`). Refused with " +
          "409 `circuit_in_use` while proofs of a version it would remove are queued or running (removing the name then " +
          "removes nothing); built-in circuits cannot be removed. Removed versions' proofs stay verifiable, and their numbers " +
          "are never given to a later upload."
      )
  )
  .add(
    HttpApiEndpoint.get("verifier")`/circuits/${circuitName}/verifier.sol`
      .setUrlParams(Schema.Struct({ proving_system: Schema.optional(ProvingSystem) }))
      .addSuccess(HttpApiSchema.Text({ contentType: "text/plain; charset=utf-8" }).annotations({ description: "The Solidity source" }))
      .addError(CircuitNotFoundWire)
      .addError(CircuitNotReadyWire)
      .pipe(requires("circuits:read"))
      .annotate(
        OpenApi.Description,
        "A Solidity contract that verifies the circuit's proofs on chain (`verifyProof`, as `GET /proofs/{id}/calldata` " +
          "calls it): snarkjs's verifier of the circuit's `proving_system`, or of `?proving_system=` (one of its " +
          "`proving_systems`; another is 400); for a Noir program (`ultra_honk`), bb.js's HonkVerifier " +
          "(`verify(bytes,bytes32[])`) with the server's CRS. Only for a ready circuit: `{name}` is the newest version, " +
          "`{name}@N` version N (each version has its own key)."
      )
  )
  .add(
    HttpApiEndpoint.get("artifact")`/circuits/${circuitName}/artifacts/${artifactKind}`
      .setUrlParams(Schema.Struct({
        proving_system: Schema.optional(ProvingSystem.annotations({
          description: "`zkey` and `verification_key`: the system whose key to send, one of the circuit's `proving_systems` " +
            "(default: its `proving_system`)"
        }))
      }))
      .addSuccess(DownloadedFile)
      .addError(CircuitNotFoundWire)
      .addError(CircuitNotReadyWire)
      .addError(RangeNotSatisfiableWire)
      .pipe(requires("circuits:read"))
      .annotate(
        OpenApi.Description,
        "Download one of a ready circuit's files, for proving or verifying in your own code (snarkjs in a browser): " +
          "`wasm` (the witness calculator, `application/wasm`), `zkey` (the proving key of `?proving_system=`), " +
          "`verification_key` (the key as snarkjs exports it, `application/json`), `r1cs` and `sym` where the circuit has " +
          "them (uploads of circom sources, or prebuilt ones that sent them; built-in circuits have neither), and a Noir " +
          "circuit's `noir_program` (the program JSON bb.js proves from; its key is `verification_key`). A kind the circuit " +
          "does not have is 400 naming the ones it has. `{name}` is the newest version, `{name}@N` version N, built-in " +
          "circuits included; a circuit still compiling or failed is 409 `circuit_not_ready`. The file is streamed as it is " +
          "read, however large: `ETag` is its SHA-256 (quoted), `If-None-Match` with it answers 304, and a `Range` of one " +
          "byte range resumes a broken download (206 with `Content-Range`; `If-Range` with the ETag keeps the parts of one " +
          "file). A browser page on another origin needs the server's CORS settings to allow it (see the docs' browser example)."
      )
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Circuits")
{}
