import { Either, Option } from "effect"
import type { ErrorDetail } from "../kernel/errors.js"
import type { CircuitInputKind, CircuitInputSpec, CircuitSpec } from "./circuits.js"
import type { CircuitInputs, CreateProofInput } from "./proof.js"

const UINT64_LIMIT = 2n ** 64n
const CANONICAL_DECIMAL = /^(0|[1-9][0-9]*)$/

/** A request that passed validation: the circuit inputs in canonical decimal form. */
export interface ValidatedProofRequest {
  readonly spec: CircuitSpec
  readonly inputs: CircuitInputs
  /** The public inputs known before proving (outputs such as `c` arrive with the proof). */
  readonly public_inputs: Readonly<Record<string, string>>
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

const checkInput = (
  spec: CircuitInputSpec,
  value: unknown,
  path: string,
  modulus: bigint,
  details: Array<ErrorDetail>
): string | ReadonlyArray<string> | undefined => {
  if (spec.length === undefined) {
    if (Array.isArray(value)) {
      details.push({ path, message: "must be a single integer, not an array" })
      return undefined
    }
    return Either.match(checkValue(value, spec.kind, modulus), {
      onLeft: (message) => void details.push({ path, message }),
      onRight: (canonical) => canonical
    })
  }
  if (!Array.isArray(value)) {
    details.push({ path, message: `must be an array of ${spec.length} integers` })
    return undefined
  }
  if (value.length !== spec.length) {
    details.push({ path, message: `must have exactly ${spec.length} elements, got ${value.length}` })
    return undefined
  }
  const out: Array<string> = []
  let ok = true
  value.forEach((element, i) => {
    Either.match(checkValue(element, spec.kind, modulus), {
      onLeft: (message) => {
        ok = false
        details.push({ path: `${path}.${i}`, message })
      },
      onRight: (canonical) => void out.push(canonical)
    })
  })
  return ok ? out : undefined
}

/** A request's circuit inputs checked against the catalog: its `details`, or the validated request. */
export type ProofRequestValidator = (
  request: CreateProofInput,
  prefix?: string
) => Either.Either<ValidatedProofRequest, ReadonlyArray<ErrorDetail>>

/**
 * Checks decoded `{type, inputs}` requests against the catalog: a known type, every input present
 * and none extra, each value canonical and in range. `prefix` is prepended to every detail path
 * (`proofs.3.` in a batch), so a client can find the offending value. What a circuit's check needs
 * (its field modulus, its input names) is worked out once per circuit, not per request.
 */
export const makeProofRequestValidator = (lookup: (type: string) => Option.Option<CircuitSpec>): ProofRequestValidator => {
  const checkers = new WeakMap<CircuitSpec, { readonly modulus: bigint; readonly known: ReadonlySet<string> }>()
  const checkerOf = (spec: CircuitSpec) => {
    let checker = checkers.get(spec)
    if (checker === undefined) {
      checker = { modulus: BigInt(spec.field_modulus), known: new Set(spec.inputs.map((i) => i.name)) }
      checkers.set(spec, checker)
    }
    return checker
  }
  return ({ inputs, type }, prefix = "") => {
    const details: Array<ErrorDetail> = []
    const found = lookup(type)
    if (Option.isNone(found)) return Either.left([{ path: `${prefix}type`, message: `unknown proof type ${JSON.stringify(type)}` }])
    const spec = found.value
    const { known, modulus } = checkerOf(spec)
    const circuitInputs: Record<string, string | ReadonlyArray<string>> = {}
    const publicInputs: Record<string, string> = {}
    for (const input of spec.inputs) {
      const path = `${prefix}inputs.${input.name}`
      if (!Object.hasOwn(inputs, input.name)) {
        details.push({ path, message: "is required" })
        continue
      }
      const checked = checkInput(input, inputs[input.name], path, modulus, details)
      if (checked === undefined) continue
      circuitInputs[input.name] = checked
      if (input.visibility === "public" && typeof checked === "string") publicInputs[input.name] = checked
    }
    for (const key of Object.keys(inputs)) {
      if (!known.has(key)) details.push({ path: `${prefix}inputs.${key}`, message: `is not an input of ${spec.type}` })
    }
    return details.length > 0 ? Either.left(details) : Either.right({ spec, inputs: circuitInputs, public_inputs: publicInputs })
  }
}
