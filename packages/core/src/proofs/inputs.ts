import type { ProvingSystem } from "../kernel/provingSystem.js"
import { Either, Option } from "effect"
import type { Circuit, CircuitInput, CircuitInputKind } from "../circuits/circuit.js"
import type { ErrorDetail } from "../kernel/errors.js"
import type { CircuitInputs, CircuitInputValue, CreateProofInput } from "./proof.js"

const UINT64_LIMIT = 2n ** 64n
const CANONICAL_DECIMAL = /^(0|[1-9][0-9]*)$/

/** Inputs that passed validation against their circuit, in canonical decimal form. */
export interface ValidatedInputs {
  readonly inputs: CircuitInputs
  /**
   * The public inputs known before proving (outputs arrive with the proof), named as the circuit's
   * `public_signals` name them: `x` for a single value, `x[1][0]` for an array element.
   */
  readonly public_inputs: Readonly<Record<string, string>>
}

/** A request that passed validation, with the circuit it is for. */
export interface ValidatedProofRequest extends ValidatedInputs {
  readonly circuit: Circuit
  /** The system to prove with: one of `circuit.proving_systems`. */
  readonly proving_system: ProvingSystem
}

const bounds = (kind: CircuitInputKind, modulus: bigint): { readonly limit: bigint; readonly text: string } => {
  switch (kind) {
    case "bit":
      return { limit: 2n, text: "must be 0 or 1" }
    case "uint64":
      return { limit: UINT64_LIMIT, text: "must be less than 2^64 (an unsigned 64-bit integer)" }
    case "field":
      return { limit: modulus, text: "must be less than the field modulus r" }
  }
}

/**
 * One value → its canonical decimal string, or why not. JSON numbers are accepted only while they
 * are exact integers (≤ 2^53 − 1); larger values must come as decimal strings.
 */
const checkValue = (value: unknown, kind: CircuitInputKind, modulus: bigint): Either.Either<string, string> => {
  let n: bigint
  if (typeof value === "number") {
    if (!Number.isInteger(value)) return Either.left("must be an integer")
    if (!Number.isSafeInteger(value)) return Either.left("is too large for a JSON number; send it as a decimal string")
    n = BigInt(value)
  } else if (typeof value === "string") {
    if (/^-[0-9]+$/.test(value)) return Either.left("must not be negative")
    if (!CANONICAL_DECIMAL.test(value)) return Either.left("must be a decimal integer string without sign, spaces or leading zeros")
    n = BigInt(value)
  } else {
    return Either.left("must be an integer (a JSON number or a decimal string)")
  }
  if (n < 0n) return Either.left("must not be negative")
  const { limit, text } = bounds(kind, modulus)
  return n < limit ? Either.right(n.toString()) : Either.left(text)
}

/** What an array of these dimensions holds, in words: "3 integers", "2 arrays of 3 integers". */
const shapeText = (dimensions: ReadonlyArray<number>): string =>
  dimensions.length === 1
    ? `${dimensions[0]} integer${dimensions[0] === 1 ? "" : "s"}`
    : `${dimensions[0]} array${dimensions[0] === 1 ? "" : "s"} of ${shapeText(dimensions.slice(1))}`

/**
 * A value of `dimensions` (outermost first) → the same shape in canonical strings, or undefined
 * after pushing one detail per problem. An array's elements are checked only once its length is
 * right, so a wrong length is one detail, not one per element.
 */
const checkShaped = (
  kind: CircuitInputKind,
  dimensions: ReadonlyArray<number>,
  value: unknown,
  path: string,
  modulus: bigint,
  details: Array<ErrorDetail>
): CircuitInputValue | undefined => {
  if (dimensions.length === 0) {
    if (Array.isArray(value)) {
      details.push({ path, message: "must be a single integer, not an array" })
      return undefined
    }
    return Either.match(checkValue(value, kind, modulus), {
      onLeft: (message) => void details.push({ path, message }),
      onRight: (canonical) => canonical
    })
  }
  const [length, ...inner] = dimensions as [number, ...Array<number>]
  if (!Array.isArray(value)) {
    details.push({ path, message: `must be an array of ${shapeText(dimensions)}` })
    return undefined
  }
  if (value.length !== length) {
    details.push({ path, message: `must have exactly ${length} elements, got ${value.length}` })
    return undefined
  }
  const out: Array<CircuitInputValue> = []
  let ok = true
  value.forEach((element, i) => {
    const checked = checkShaped(kind, inner, element, `${path}.${i}`, modulus, details)
    if (checked === undefined) ok = false
    else out.push(checked)
  })
  return ok ? out : undefined
}

/** Adds a public input's values under their signal names (`x`, `x[0]`, `x[1][0]`). */
const flattenPublic = (name: string, value: CircuitInputValue, into: Record<string, string>) => {
  if (typeof value === "string") into[name] = value
  else value.forEach((element, i) => flattenPublic(`${name}[${i}]`, element, into))
}

/** What checking a circuit's inputs needs, worked out once per circuit record rather than per request. */
interface Checker {
  readonly modulus: bigint
  readonly known: ReadonlySet<string>
}
const checkers = new WeakMap<Circuit, Checker>()
const checkerOf = (circuit: Circuit): Checker => {
  let checker = checkers.get(circuit)
  if (checker === undefined) {
    checker = { modulus: BigInt(circuit.field_modulus), known: new Set(circuit.inputs.map((i: CircuitInput) => i.name)) }
    checkers.set(circuit, checker)
  }
  return checker
}

/**
 * Checks a request's `inputs` against a ready circuit: every input present and none extra, each
 * value canonical and in range, arrays of exactly the circuit's dimensions. `prefix` is prepended
 * to every detail path (`proofs.3.` in a batch), so a client can find the offending value.
 */
export const validateCircuitInputs = (
  circuit: Circuit,
  inputs: CreateProofInput["inputs"],
  prefix = ""
): Either.Either<ValidatedInputs, ReadonlyArray<ErrorDetail>> => {
  const details: Array<ErrorDetail> = []
  const { known, modulus } = checkerOf(circuit)
  // Without a prototype, an input named `__proto__` (a valid circom identifier) is a key like any other.
  const circuitInputs: Record<string, CircuitInputValue> = Object.create(null)
  const publicInputs: Record<string, string> = Object.create(null)
  for (const input of circuit.inputs) {
    const path = `${prefix}inputs.${input.name}`
    if (!Object.hasOwn(inputs, input.name)) {
      details.push({ path, message: "is required" })
      continue
    }
    const checked = checkShaped(input.kind, input.dimensions, inputs[input.name], path, modulus, details)
    if (checked === undefined) continue
    circuitInputs[input.name] = checked
    if (input.visibility === "public") flattenPublic(input.name, checked, publicInputs)
  }
  for (const key of Object.keys(inputs)) {
    if (!known.has(key)) details.push({ path: `${prefix}inputs.${key}`, message: `is not an input of ${circuit.name}` })
  }
  return details.length > 0 ? Either.left(details) : Either.right({ inputs: circuitInputs, public_inputs: publicInputs })
}

/** The detail of a request whose `type` names no circuit the caller can see; `hint` says what it has instead. */
export const unknownTypeDetail = (type: string, prefix = "", hint?: string): ErrorDetail => ({
  path: `${prefix}type`,
  message: `unknown proof type ${JSON.stringify(type)}${hint === undefined ? "" : `: ${hint}`}`
})

/** A request's circuit inputs checked against the circuits a lookup finds: its `details`, or the validated request. */
export type ProofRequestValidator = (
  request: CreateProofInput,
  prefix?: string
) => Either.Either<ValidatedProofRequest, ReadonlyArray<ErrorDetail>>

/**
 * Checks decoded `{type, inputs}` requests against the circuits `lookup` finds (ready ones): a
 * known type, then `validateCircuitInputs`. For callers whose circuits are at hand (the built-in
 * ones); the proof service resolves accounts' circuits from storage first.
 */
export const makeProofRequestValidator = (lookup: (type: string) => Option.Option<Circuit>): ProofRequestValidator =>
({ inputs, proving_system, type }, prefix = "") => {
  const found = lookup(type)
  if (Option.isNone(found)) return Either.left([unknownTypeDetail(type, prefix)])
  const circuit = found.value
  return Either.flatMap(
    provingSystemFor(circuit, proving_system, prefix),
    (system) => Either.map(validateCircuitInputs(circuit, inputs, prefix), (valid) => ({ ...valid, circuit, proving_system: system }))
  )
}

/**
 * The system a proof request gets: the one it names, else the circuit's own; refused, naming the
 * field, when the circuit has no key for it (an uploaded circuit has one system, a built-in several).
 */
export const provingSystemFor = (
  circuit: Circuit,
  asked: ProvingSystem | undefined,
  prefix = ""
): Either.Either<ProvingSystem, ReadonlyArray<ErrorDetail>> => {
  const system = asked ?? circuit.proving_system
  if (circuit.proving_systems.includes(system)) return Either.right(system)
  return Either.left([{
    path: `${prefix}proving_system`,
    message: `circuit ${JSON.stringify(circuit.name)} can be proven with ${circuit.proving_systems.join(", ")}, not ${system}` +
      (circuit.owner === "builtin" ? "" : " (an uploaded circuit is set up for one system: upload it again with proving_system to use another)")
  }])
}
