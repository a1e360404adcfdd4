import { BN128_FIELD_MODULUS, BuiltinCircuits, type Circuit, type CircuitInput, type Digest, type Timestamp } from "@mzk/core"
import { Layer, Option } from "effect"
import { readFileSync } from "node:fs"
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

export const buildFilesOf = (circuit: string, buildDir: string = BUILD_DIR): BuildFiles => ({
  wasm: `${buildDir}/${circuit}/${circuit}.wasm`,
  zkey: `${buildDir}/${circuit}/${circuit}.zkey`,
  vkey: `${buildDir}/${circuit}/verification_key.json`
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
  return {
    id: null,
    name: c.name,
    owner: "builtin",
    status: "ready",
    error: null,
    description: c.description,
    constraints: built.constraints,
    inputs: c.inputs,
    public_signals: c.public_signals,
    verification_key: JSON.parse(readFileSync(files.vkey, "utf8")) as unknown,
    development_only: built.developmentOnly,
    field_modulus: file.field_modulus,
    artifacts: { wasm, zkey, r1cs: null, sym: null },
    created_at: file.created_at as Timestamp,
    updated_at: file.created_at as Timestamp,
    metadata: {}
  }
})

const byName = new Map(BUILTIN_CIRCUITS.map((circuit) => [circuit.name, circuit]))

export const builtinCircuit = (name: string): Option.Option<Circuit> => Option.fromNullable(byName.get(name))

/** The build file holding a built-in artifact, by its digest. */
export const builtinArtifactFile = (digest: string): Option.Option<string> => Option.fromNullable(builtinFiles.get(digest))

/** The built-in circuits as the core's `BuiltinCircuits`. */
export const BuiltinCircuitsLive: Layer.Layer<BuiltinCircuits> = Layer.succeed(BuiltinCircuits, {
  list: BUILTIN_CIRCUITS,
  get: builtinCircuit
})
