import { Schema } from "effect"
import { AccountId, CircuitId } from "../kernel/ids.js"
import { type Metadata, MetadataField } from "../kernel/metadata.js"
import { pageQuery } from "../kernel/paging.js"
import { ProvingSystem } from "../kernel/provingSystem.js"
import { Timestamp } from "../kernel/time.js"

/** A circuit's name is the `type` of its proofs: letters, digits, `_`, `-`; 1 to 64 characters. */
export const CircuitName = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z0-9_-]{1,64}$/, {
    message: () => "must be 1 to 64 characters: letters, digits, '_' or '-'"
  }),
  Schema.annotations({ identifier: "CircuitName" })
)

/**
 * A reference to a circuit, as a proof's `type` and a path's `{name}` carry it: `name` (which
 * version depends on the use: the newest ready one to prove with, the newest to show) or
 * `name@N`, exactly version N (a positive integer). Names cannot hold `@`, so the split is
 * unambiguous; anything after an `@` that is not such a number leaves the whole reference a name,
 * which no circuit has (an unknown circuit, as any other).
 */
export interface CircuitRef {
  readonly name: string
  readonly version: number | null
}

/** The one parser of circuit references, used by every way in (HTTP paths, proof types, the CLI, createMzk). */
export const parseCircuitRef = (ref: string): CircuitRef => {
  const match = /^(.+)@([1-9][0-9]{0,8})$/.exec(ref)
  return match === null ? { name: ref, version: null } : { name: match[1]!, version: Number(match[2]) }
}

/** `name@N`, or the bare name when no version was named: how messages name what was asked for. */
export const formatCircuitRef = (ref: CircuitRef): string => (ref.version === null ? ref.name : `${ref.name}@${ref.version}`)

/** `GET /circuits/{name}/versions`'s query: a page, its cursors circuit ids (each version has its own). */
export const ListCircuitVersionsQuery = Schema.Struct(pageQuery(CircuitId).fields)
export type ListCircuitVersionsQuery = typeof ListCircuitVersionsQuery.Type

/** SHA-256 of an artifact's bytes, lowercase hex: the key artifacts are stored and cached under. */
export const Digest = Schema.String.pipe(Schema.pattern(/^[0-9a-f]{64}$/), Schema.brand("Digest"))
export type Digest = typeof Digest.Type

export const CIRCUIT_STATUSES = ["compiling", "ready", "failed"] as const
export const CircuitStatus = Schema.Literal(...CIRCUIT_STATUSES).annotations({ identifier: "CircuitStatus" })
export type CircuitStatus = typeof CircuitStatus.Type

/**
 * Why a circuit could not be built. `file` and `line` locate a compiler error in the upload where
 * the compiler names them.
 */
export const CIRCUIT_ERROR_CODES = [
  "compile_error",
  "include_outside_upload",
  "circuit_too_large",
  "compile_timeout",
  "compile_memory_exceeded",
  "invalid_artifacts",
  "artifact_mismatch",
  "sample_inputs_required",
  "internal"
] as const
export const CircuitErrorCode = Schema.Literal(...CIRCUIT_ERROR_CODES).annotations({
  description: "Prebuilt uploads: `invalid_artifacts` (a file is not what its part says, a zkey point is off its curve or " +
    "outside G2, the sample inputs are refused), `artifact_mismatch` (the zkey, wasm, sym or r1cs are not of one circuit), " +
    "`sample_inputs_required` (the all-zero input fails the circuit and neither `sample_inputs` nor the `r1cs` was sent, so " +
    "nothing could tie the zkey to the wasm)"
})
export type CircuitErrorCode = typeof CircuitErrorCode.Type
export const CircuitError = Schema.Struct({
  code: CircuitErrorCode,
  message: Schema.String,
  file: Schema.optionalWith(Schema.String, { exact: true }),
  line: Schema.optionalWith(Schema.Int, { exact: true })
}).annotations({ identifier: "CircuitError" })
export type CircuitError = typeof CircuitError.Type

/**
 * What a circuit input accepts, checked before a proof is queued: the witness calculator silently
 * reduces every value mod r and maps negatives into the field, so non-canonical values must be
 * refused here or a client would get a valid proof of a statement it did not make.
 * - `field`: an integer 0 ≤ x < r (the circuit's field modulus); every uploaded circuit's inputs
 * - `uint64`: an integer 0 ≤ x < 2^64
 * - `bit`: 0 or 1
 */
export const CircuitInputKind = Schema.Literal("field", "uint64", "bit")
export type CircuitInputKind = typeof CircuitInputKind.Type

/** One input signal of `main`, as the compiled circuit declares it. */
export const CircuitInput = Schema.Struct({
  name: Schema.String,
  visibility: Schema.Literal("public", "private"),
  kind: CircuitInputKind,
  dimensions: Schema.Array(Schema.Int).annotations({
    description: "Array dimensions, outermost first; `[]` for a single value. Values come as nested arrays"
  })
}).annotations({ identifier: "CircuitInput" })
export type CircuitInput = typeof CircuitInput.Type

/** bn128's scalar field modulus r: every signal of every circuit mzk proves lies in this field. */
export const BN128_FIELD_MODULUS = "21888242871839275222246405745257275088548364400416034343698204186575808495617"

/**
 * The built artifacts of a ready circuit, by digest (`r1cs`/`sym` where the build has them). An
 * `ultra_honk` circuit (a Noir program) has no witness wasm nor zkey: `wasm` is its program JSON
 * (ABI and ACIR, what the prover executes) and `zkey` its UltraHonk verification key's bytes, so
 * the prover finds them, and storage keeps them, the way it does every circuit's.
 */
export const CircuitArtifacts = Schema.Struct({
  wasm: Digest,
  zkey: Digest,
  r1cs: Schema.NullOr(Digest),
  sym: Schema.NullOr(Digest)
})
export type CircuitArtifacts = typeof CircuitArtifacts.Type

/**
 * What an account uploaded, by digest: circom sources (`main` is the path of the main file among
 * `files`) or prebuilt artifacts (`sym` names the signals; circom writes it with `--sym`;
 * `sample_inputs`, absent from uploads made before it existed, one input the build proves).
 */
export const CircuitSource = Schema.Union(
  Schema.Struct({
    kind: Schema.Literal("circom"),
    main: Schema.String,
    files: Schema.Record({ key: Schema.String, value: Digest }),
    /** The system the build sets up for; absent (uploads before it existed, and the default) is groth16. */
    proving_system: Schema.optionalWith(ProvingSystem, { exact: true })
  }),
  Schema.Struct({
    kind: Schema.Literal("artifacts"),
    wasm: Digest,
    zkey: Digest,
    sym: Digest,
    r1cs: Schema.NullOr(Digest),
    sample_inputs: Schema.optionalWith(Digest, { exact: true }),
    /** The system the upload named; absent when it named none (the zkey's header decides). */
    proving_system: Schema.optionalWith(ProvingSystem, { exact: true })
  }),
  /** A Noir project (`Nargo.toml` + the `.nr` files under `src/`), each file by its path in the upload; proven with UltraHonk. */
  Schema.Struct({
    kind: Schema.Literal("noir"),
    files: Schema.Record({ key: Schema.String, value: Digest })
  }),
  /** A prebuilt Noir program (`nargo compile`'s `target/<name>.json`: ABI and ACIR); proven with UltraHonk. */
  Schema.Struct({
    kind: Schema.Literal("noir_program"),
    program: Digest
  })
)
export type CircuitSource = typeof CircuitSource.Type

/**
 * A circuit as mzk keeps it. Built-in circuits (owner `builtin`) come from `@mzk/proving` and are
 * never stored; accounts' circuits are rows whose status moves `compiling → ready | failed`.
 * `inputs`, `public_signals`, `constraints` and `verification_key` are derived from the build and
 * stay empty/null until it is ready.
 */
export interface Circuit {
  readonly id: CircuitId | null
  readonly name: string
  /**
   * Which upload of `name` in its account this is: 1, 2, … in the order they were accepted, never
   * reused (removed versions keep their number, since proofs name them). Built-in circuits: 1.
   */
  readonly version: number
  readonly owner: "builtin" | AccountId
  readonly status: CircuitStatus
  readonly error: CircuitError | null
  readonly description: string | null
  readonly constraints: number | null
  readonly inputs: ReadonlyArray<CircuitInput>
  /** Public signal names in the order the prover emits them (outputs first, then public inputs; array elements as `name[i][j]`). */
  readonly public_signals: ReadonlyArray<string>
  /** The verification key as snarkjs exports it (of `proving_system`). */
  readonly verification_key: unknown
  /**
   * The system the circuit is set up for, and its proofs made with by default: an account's
   * circuit is set up for one; a built-in one may have keys for several (`proving_systems`).
   */
  readonly proving_system: ProvingSystem
  /** Every system a proof of this circuit may ask for: `[proving_system]` for an account's circuit. */
  readonly proving_systems: ReadonlyArray<ProvingSystem>
  /** Built with a setup nobody can trust (a development ptau, or the bundled single-contribution one). */
  readonly development_only: boolean
  /** The field modulus r as a decimal string (bn128 for every circuit mzk proves). */
  readonly field_modulus: string
  readonly artifacts: CircuitArtifacts | null
  readonly created_at: Timestamp
  readonly updated_at: Timestamp
  /** The application's own pairs, set at upload; `{}` for built-in circuits. */
  readonly metadata: Metadata
}

/** A circuit in storage: an account's, with its upload and compile-job state. */
export interface StoredCircuit extends Circuit {
  readonly id: CircuitId
  readonly owner: AccountId
  readonly source: CircuitSource
  /** Compile-job claim: the lease of whichever worker builds it now, and how often it was claimed. */
  readonly lease_expires_at: Timestamp | null
  readonly attempts: number
}

/** `data` of `circuit.ready`: the build succeeded and proofs of the circuit may be requested. */
export const CircuitReadyData = Schema.Struct({
  name: Schema.String,
  version: Schema.Int.annotations({ description: "Which version of `name` was built (`name@version` proves with exactly it)" }),
  status: Schema.Literal("ready"),
  proving_system: ProvingSystem,
  constraints: Schema.Int,
  development_only: Schema.Boolean,
  created_at: Timestamp,
  metadata: MetadataField
})

/** `data` of `circuit.failed`: the build ended with `error`; the upload must be fixed and sent again. */
export const CircuitFailedData = Schema.Struct({
  name: Schema.String,
  version: Schema.Int.annotations({ description: "Which version of `name` failed to build" }),
  status: Schema.Literal("failed"),
  error: CircuitError,
  created_at: Timestamp,
  metadata: MetadataField
})

/**
 * Every artifact a circuit refers to, each once: its upload's and, once built, its build's. What
 * storage keeps while any live circuit refers to it, and may delete once none does.
 */
export const circuitDigests = (circuit: Pick<StoredCircuit, "source" | "artifacts">): ReadonlyArray<Digest> => {
  const { artifacts, source } = circuit
  const digests = source.kind === "circom" || source.kind === "noir"
    ? Object.values(source.files)
    : source.kind === "noir_program"
    ? [source.program]
    : [source.wasm, source.zkey, source.sym, ...(source.r1cs === null ? [] : [source.r1cs]),
      ...(source.sample_inputs === undefined ? [] : [source.sample_inputs])]
  if (artifacts !== null) {
    digests.push(artifacts.wasm, artifacts.zkey)
    if (artifacts.r1cs !== null) digests.push(artifacts.r1cs)
    if (artifacts.sym !== null) digests.push(artifacts.sym)
  }
  return [...new Set(digests)]
}

/** A stored circuit as the API shows it: without its upload and compile-job state. */
export const toCircuit = (stored: Circuit): Circuit => ({
  id: stored.id,
  name: stored.name,
  version: stored.version,
  owner: stored.owner,
  status: stored.status,
  error: stored.error,
  description: stored.description,
  constraints: stored.constraints,
  inputs: stored.inputs,
  public_signals: stored.public_signals,
  verification_key: stored.verification_key,
  proving_system: stored.proving_system,
  proving_systems: stored.proving_systems,
  development_only: stored.development_only,
  field_modulus: stored.field_modulus,
  artifacts: stored.artifacts,
  created_at: stored.created_at,
  updated_at: stored.updated_at,
  metadata: stored.metadata
})
