import { Context, type Effect, Schema, type Stream } from "effect"
import type { StorageError } from "../kernel/errors.js"
import type { ProvingSystem } from "../kernel/provingSystem.js"
import { CircuitErrorCode, type CircuitInput, type Digest } from "./circuit.js"

/** The systems a circom circuit (an r1cs and a snarkjs zkey) can be set up for. */
export type SetupSystem = Extract<ProvingSystem, "groth16" | "plonk" | "fflonk">
export const SETUP_SYSTEMS: ReadonlyArray<SetupSystem> = ["groth16", "plonk", "fflonk"]

/** An artifact already in `ArtifactsRepo`, read chunk by chunk: a build copies it to disk, never whole into memory. */
export interface StoredBuildFile {
  readonly digest: Digest
  readonly size: number
  readonly chunks: Stream.Stream<Uint8Array, StorageError>
}

/** A large prebuilt artifact as a build gets and gives it: bytes, or stored (see `StoredBuildFile`). */
export type BuildFile = Uint8Array | StoredBuildFile

/** The size of a build file in bytes. */
export const buildFileSize = (file: BuildFile): number => (file instanceof Uint8Array ? file.length : file.size)

/** One build's input: what was uploaded, the large prebuilt artifacts as they are stored. */
export type BuildInput =
  | {
    /** A Noir project: `Nargo.toml` and the `.nr` files under `src/` by their paths in the upload. */
    readonly kind: "noir"
    readonly files: Readonly<Record<string, Uint8Array>>
  }
  | {
    /** A prebuilt Noir program JSON (`nargo compile`'s output). */
    readonly kind: "noir_program"
    readonly program: Uint8Array
  }
  | {
    readonly kind: "circom"
    /** Path of the main file among `files`. */
    readonly main: string
    /** Every uploaded file by its path in the upload (`main` included). */
    readonly files: Readonly<Record<string, Uint8Array>>
    /** What to set up for (absent: groth16). */
    readonly proving_system?: SetupSystem
  }
  | {
    readonly kind: "artifacts"
    readonly wasm: BuildFile
    readonly zkey: BuildFile
    readonly sym: Uint8Array
    readonly r1cs: BuildFile | null
    /**
     * One input the circuit accepts, as the JSON object of a proof's `inputs`: the build proves it
     * to check that the zkey belongs to the wasm (without it, the all-zero input is tried).
     */
    readonly sample_inputs?: Uint8Array
    /** The system the upload named: the zkey must be of it. Absent: the zkey's header decides. */
    readonly proving_system?: SetupSystem
  }

/**
 * A finished build: artifacts (as bytes, or the stored input files given back unchanged, which are
 * not stored again) and what was derived from them.
 */
export interface BuildOutput {
  readonly wasm: BuildFile
  readonly zkey: BuildFile
  readonly r1cs: BuildFile | null
  readonly sym: Uint8Array | null
  readonly constraints: number
  readonly inputs: ReadonlyArray<CircuitInput>
  readonly public_signals: ReadonlyArray<string>
  readonly verification_key: unknown
  /**
   * The system the zkey is set up for (given back as asked, or read from a prebuilt zkey's header);
   * `ultra_honk` for a Noir program, whose `wasm` is the program JSON and `zkey` the verification key.
   */
  readonly proving_system: ProvingSystem
  readonly development_only: boolean
}

/** Why a build failed, for the circuit's `error`; `file`/`line` locate a compiler error in the upload. */
export class BuildFailure extends Schema.TaggedError<BuildFailure>()("BuildFailure", {
  code: CircuitErrorCode,
  message: Schema.String,
  file: Schema.optional(Schema.String),
  line: Schema.optional(Schema.Int)
}) {}

/**
 * The trusted setup circom sources get from this compiler: available (and whether it is one only
 * fit for development, such as a locally made powers of tau), or not at all, with the message that
 * tells the uploader why and the operator how to fix it. Prebuilt artifacts need none.
 */
export type SourceSetup =
  | { readonly available: true; readonly developmentOnly: boolean }
  | { readonly available: false; readonly message: string }

/**
 * Compiles and sets up a circuit (circom → r1cs + witness wasm → Groth16 setup against the
 * operator's powers of tau), or checks prebuilt artifacts. Runs its work in a child process with
 * a memory ceiling and a time limit. `@mzk/proving` implements it; the testkit has a fake.
 */
export class CircuitCompiler extends Context.Tag("@mzk/core/CircuitCompiler")<CircuitCompiler, {
  /** Known when the compiler is made, so an upload is refused, or marked `development_only`, when it arrives. */
  readonly sourceSetup: SourceSetup
  /**
   * Whether Noir programs can be proven here: they need the operator's UltraHonk CRS (absent: not
   * available, uploads of Noir programs are refused as circom sources are without a ptau).
   */
  readonly noirSetup?: SourceSetup
  readonly build: (input: BuildInput) => Effect.Effect<BuildOutput, BuildFailure>
  /**
   * A Solidity contract that verifies proofs against this verification key: snarkjs's template for
   * its system, or bb.js's HonkVerifier for an UltraHonk key (`{ protocol: "ultra_honk", vk }`).
   */
  readonly solidityVerifier: (verificationKey: unknown) => Effect.Effect<string, BuildFailure>
}>() {}
