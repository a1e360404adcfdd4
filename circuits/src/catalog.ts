import { CircuitCatalog, type CircuitSpec, makeProofRequestValidator } from "@mzk/core"
import { Option } from "effect"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"

interface CatalogFile {
  readonly field_modulus: string
  readonly circuits: ReadonlyArray<Omit<CircuitSpec, "field_modulus" | "verification_key">>
}

/** The package root: `build/` and `src/catalog.json` are found from here, wherever the caller runs. */
export const CIRCUITS_ROOT = fileURLToPath(new URL("..", import.meta.url))
export const BUILD_DIR = fileURLToPath(new URL("../build/", import.meta.url))

export interface CircuitArtifacts {
  readonly wasm: string
  readonly zkey: string
  readonly vkey: string
}

export const artifactsOf = (circuit: string, buildDir: string = BUILD_DIR): CircuitArtifacts => ({
  wasm: `${buildDir}/${circuit}/${circuit}.wasm`,
  zkey: `${buildDir}/${circuit}/${circuit}.zkey`,
  vkey: `${buildDir}/${circuit}/verification_key.json`
})

const file = JSON.parse(readFileSync(new URL("./catalog.json", import.meta.url), "utf8")) as CatalogFile

/** bn128's scalar field modulus r: every signal is an element of this field. */
export const FIELD_MODULUS = BigInt(file.field_modulus)

/**
 * Every proof type with its circuit, inputs, bounds, public signal order and the committed
 * verification key. `catalog.json` is the one source; the build's `check.mjs` asserts the
 * public signal order against it.
 */
export const CIRCUIT_SPECS: ReadonlyArray<CircuitSpec> = file.circuits.map((c) => ({
  ...c,
  field_modulus: file.field_modulus,
  verification_key: JSON.parse(readFileSync(artifactsOf(c.circuit).vkey, "utf8")) as unknown
}))

const byType = new Map(CIRCUIT_SPECS.map((spec) => [spec.type, spec]))
const byCircuit = new Map(CIRCUIT_SPECS.map((spec) => [spec.circuit, spec]))

export const specOfType = (type: string): Option.Option<CircuitSpec> => Option.fromNullable(byType.get(type))
export const specOfCircuit = (circuit: string): Option.Option<CircuitSpec> => Option.fromNullable(byCircuit.get(circuit))

/** The real catalog as the core's `CircuitCatalog` port. */
export const CircuitCatalogLive = CircuitCatalog.fromSpecs(CIRCUIT_SPECS)

/**
 * Validates `{type, inputs}` against the catalog: details name each bad input by path
 * (`inputs.a`, `inputs.path_elements.3`). The rules live in the core, which runs them before
 * anything is queued; this is the same check for direct users of the prover.
 */
export const validateInputs = makeProofRequestValidator(specOfType)
