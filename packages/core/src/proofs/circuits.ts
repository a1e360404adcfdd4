import { Context, Layer, Option } from "effect"

/**
 * What a circuit input accepts, checked before a proof is queued: the witness calculator silently
 * reduces every value mod r and maps negatives into the field, so non-canonical values must be
 * refused here or a client would get a valid proof of a statement it did not make.
 * - `field`: an integer 0 ≤ x < r (the circuit's field modulus)
 * - `uint64`: an integer 0 ≤ x < 2^64
 * - `bit`: 0 or 1
 */
export type CircuitInputKind = "field" | "uint64" | "bit"

export interface CircuitInputSpec {
  readonly name: string
  readonly visibility: "public" | "private"
  readonly kind: CircuitInputKind
  /** Present for array signals: the exact number of elements. */
  readonly length?: number
}

/** One proof type as the API offers it. */
export interface CircuitSpec {
  /** The `type` of a create request. */
  readonly type: string
  /** The circuit that proves it; `Prover` calls take this name. */
  readonly circuit: string
  readonly version: string
  readonly description: string
  readonly inputs: ReadonlyArray<CircuitInputSpec>
  /** Public signal names in the order the prover emits them (outputs first, then public inputs). */
  readonly public_signals: ReadonlyArray<string>
  /** The field modulus r of the circuit's curve, as a decimal string. */
  readonly field_modulus: string
  /** The Groth16 verification key as snarkjs exports it; null where there is none (fakes). */
  readonly verification_key: unknown
}

/**
 * The proof types the service offers. The core validates requests against it and never imports
 * the circuits package (GPL code stays there); `@mzk/circuits` implements it from its build, and
 * the testkit ships a copy of the same data for tests without cryptography.
 */
export class CircuitCatalog extends Context.Tag("@mzk/core/CircuitCatalog")<CircuitCatalog, {
  readonly list: ReadonlyArray<CircuitSpec>
  readonly get: (type: string) => Option.Option<CircuitSpec>
}>() {
  static readonly fromSpecs = (specs: ReadonlyArray<CircuitSpec>): Layer.Layer<CircuitCatalog> => {
    const byType = new Map(specs.map((spec) => [spec.type, spec]))
    return Layer.succeed(this, { list: specs, get: (type) => Option.fromNullable(byType.get(type)) })
  }
}
