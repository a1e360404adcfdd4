import {
  type ArtifactBytes,
  BN128_FIELD_MODULUS,
  BuiltinCircuits,
  type Circuit,
  type CircuitInput,
  type Digest,
  type ProvingSystem,
  StorageError,
  type Timestamp
} from "@mzk/core"
import { Layer, Option, Stream } from "effect"
import { createReadStream, readFileSync, statSync } from "node:fs"
import { fileURLToPath } from "node:url"

interface CatalogFile {
  readonly field_modulus: string
  /** When the committed build was made; a rebuild updates it. */
  readonly created_at: string
  readonly circuits: ReadonlyArray<{
    readonly name: string
    readonly description: string
    readonly inputs: ReadonlyArray<CircuitInput>
    readonly public_signals: ReadonlyArray<string>
  }>
}

interface ManifestFile {
  readonly circuits: Readonly<Record<string, {
    readonly constraints: number
    readonly developmentOnly: boolean
    readonly files: Readonly<Record<string, { readonly sha256: string }>>
    /** PLONK/FFLONK keys beside the Groth16 one (`scripts/build.mjs --universal`), by system. */
    readonly systems?: Readonly<Partial<Record<"plonk" | "fflonk", {
      readonly ptau: { readonly kind: string }
      readonly files: Readonly<Record<string, { readonly sha256: string }>>
    }>>>
  }>>
}

/** The package root: `build/` and `src/catalog.json` are found from here, wherever the caller runs. */
export const CIRCUITS_ROOT = fileURLToPath(new URL("..", import.meta.url))
export const BUILD_DIR = fileURLToPath(new URL("../build/", import.meta.url))

/** Where a built-in circuit's build files are. */
export interface BuildFiles {
  readonly wasm: string
  readonly zkey: string
  readonly vkey: string
}

export const buildFilesOf = (circuit: string, buildDir: string = BUILD_DIR, system: ProvingSystem = "groth16"): BuildFiles => ({
  wasm: `${buildDir}/${circuit}/${circuit}.wasm`,
  zkey: system === "groth16" ? `${buildDir}/${circuit}/${circuit}.zkey` : `${buildDir}/${circuit}/${circuit}.${system}.zkey`,
  vkey: system === "groth16" ? `${buildDir}/${circuit}/verification_key.json` : `${buildDir}/${circuit}/verification_key.${system}.json`
})

const file = JSON.parse(readFileSync(new URL("./catalog.json", import.meta.url), "utf8")) as CatalogFile
const manifest = JSON.parse(readFileSync(new URL("../build/manifest.json", import.meta.url), "utf8")) as ManifestFile

if (file.field_modulus !== BN128_FIELD_MODULUS) throw new Error("catalog.json: the field modulus is not bn128's r")

/** bn128's scalar field modulus r: every signal is an element of this field. */
export const FIELD_MODULUS = BigInt(file.field_modulus)

/**
 * A build file's digest as the build recorded it in the manifest: hashing 7 MB of artifacts on
 * every import (every CLI command) would repeat what the build already did, and a prover thread
 * checks each file against its digest when it loads it anyway.
 */
const digestOf = (circuit: string, files: ManifestFile["circuits"][string]["files"], name: string) => {
  const digest = files[name]?.sha256
  if (digest === undefined) throw new Error(`build/manifest.json has no sha256 for ${circuit}/${name}`)
  return digest as Digest
}

/** Built-in artifacts by digest → their file in `build/`, so the prover reads them with no database. */
const builtinFiles = new Map<string, string>()

/** Each built-in circuit as each of its systems proves it, by name then system. */
const variants = new Map<string, Map<ProvingSystem, Circuit>>()

/**
 * The circuits this package ships, as records of owner `builtin`: `catalog.json` gives what a
 * person wrote (description, input kinds); `build/` gives the rest (verification key, constraint
 * count, whether the setup can be trusted). Artifacts are named by the SHA-256 of the build files,
 * like an account's circuit, so the prover loads both the same way.
 */
export const BUILTIN_CIRCUITS: ReadonlyArray<Circuit> = file.circuits.map((c): Circuit => {
  const files = buildFilesOf(c.name)
  const built = manifest.circuits[c.name]
  if (built === undefined) throw new Error(`build/manifest.json has no circuit ${c.name}`)
  const wasm = digestOf(c.name, built.files, `${c.name}.wasm`)
  const zkey = digestOf(c.name, built.files, `${c.name}.zkey`)
  builtinFiles.set(wasm, files.wasm)
  builtinFiles.set(zkey, files.zkey)
  const universal = Object.entries(built.systems ?? {}) as Array<[
    "plonk" | "fflonk",
    NonNullable<NonNullable<typeof built.systems>["plonk"]>
  ]>
  const groth16: Circuit = {
    id: null,
    name: c.name,
    version: 1,
    owner: "builtin",
    status: "ready",
    error: null,
    description: c.description,
    constraints: built.constraints,
    inputs: c.inputs,
    public_signals: c.public_signals,
    verification_key: JSON.parse(readFileSync(files.vkey, "utf8")) as unknown,
    proving_system: "groth16",
    proving_systems: ["groth16", ...universal.map(([system]) => system)],
    development_only: built.developmentOnly,
    field_modulus: file.field_modulus,
    artifacts: { wasm, zkey, r1cs: null, sym: null },
    created_at: file.created_at as Timestamp,
    updated_at: file.created_at as Timestamp,
    metadata: {}
  }
  const bySystem = new Map<ProvingSystem, Circuit>([["groth16", groth16]])
  for (const [system, entry] of universal) {
    const paths = buildFilesOf(c.name, BUILD_DIR, system)
    const systemZkey = digestOf(c.name, entry.files, `${c.name}.${system}.zkey`)
    builtinFiles.set(systemZkey, paths.zkey)
    bySystem.set(system, {
      ...groth16,
      verification_key: JSON.parse(readFileSync(paths.vkey, "utf8")) as unknown,
      proving_system: system,
      // A universal setup from the development ptau is as untrustworthy as the Groth16 one.
      development_only: entry.ptau.kind !== "ceremony",
      artifacts: { wasm, zkey: systemZkey, r1cs: null, sym: null }
    })
  }
  variants.set(c.name, bySystem)
  return groth16
})

const byName = new Map(BUILTIN_CIRCUITS.map((circuit) => [circuit.name, circuit]))

export const builtinCircuit = (name: string): Option.Option<Circuit> => Option.fromNullable(byName.get(name))

/** A built-in circuit as `system` proves it; none when it has no key for that system. */
export const builtinCircuitFor = (name: string, system: ProvingSystem): Option.Option<Circuit> =>
  Option.fromNullable(variants.get(name)?.get(system))

/** The build file holding a built-in artifact, by its digest. */
export const builtinArtifactFile = (digest: string): Option.Option<string> => Option.fromNullable(builtinFiles.get(digest))

/**
 * A built-in artifact's file for downloads, read from disk as it is sent (a range by its offsets,
 * so resuming a download reads only what is left). Its size is read once, here: the package's
 * files do not change under a running process.
 */
const builtinArtifactBytes = (path: string): ArtifactBytes => ({
  size: statSync(path).size,
  read: (start, end) =>
    end <= start
      ? Stream.empty
      : Stream.fromAsyncIterable(
        createReadStream(path, { start, end: end - 1 }) as AsyncIterable<Buffer>,
        (cause) => new StorageError({ message: `Reading the built-in artifact ${path} failed: ${cause instanceof Error ? cause.message : String(cause)}` })
      )
})

/** The built-in circuits as the core's `BuiltinCircuits`. */
export const BuiltinCircuitsLive: Layer.Layer<BuiltinCircuits> = Layer.succeed(BuiltinCircuits, {
  list: BUILTIN_CIRCUITS,
  get: builtinCircuit,
  forSystem: builtinCircuitFor,
  artifact: (digest) => Option.map(builtinArtifactFile(digest), builtinArtifactBytes)
})
