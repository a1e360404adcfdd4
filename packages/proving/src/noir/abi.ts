// A Noir program's ABI in mzk's terms: its parameters as CircuitInput (what clients send, checked
// before a proof is queued) and the names of its public inputs in the order a proof carries them.
import type { CircuitInput, CircuitInputKind } from "@mzk/core"
import { Either, ParseResult, Schema } from "effect"

/** The ABI types noirc writes (noirc_abi's AbiType). */
export type NoirAbiType =
  | { readonly kind: "field" }
  | { readonly kind: "boolean" }
  | { readonly kind: "integer"; readonly sign: "unsigned" | "signed"; readonly width: number }
  | { readonly kind: "array"; readonly length: number; readonly type: NoirAbiType }
  | { readonly kind: "string"; readonly length: number }
  | { readonly kind: "struct"; readonly path: string; readonly fields: ReadonlyArray<{ readonly name: string; readonly type: NoirAbiType }> }
  | { readonly kind: "tuple"; readonly fields: ReadonlyArray<NoirAbiType> }

export interface NoirAbi {
  readonly parameters: ReadonlyArray<{ readonly name: string; readonly type: NoirAbiType; readonly visibility: string }>
  readonly return_type: { readonly abi_type: NoirAbiType; readonly visibility: string } | null
}

export class NoirAbiError extends Error {
  override readonly name = "NoirAbiError"
}

/**
 * The most values (scalars, array elements counted one by one) a program's parameters and return
 * value may hold together. Each is named and checked in this process before a proof is queued, so a
 * prebuilt program's ABI claiming an array of 2^31 elements must be refused, not expanded.
 */
export const MAX_NOIR_ABI_VALUES = 65_536

/**
 * The deepest an ABI's JSON may nest (an array of arrays adds a level, a struct three): noirc's
 * programs stay far below it.
 */
export const MAX_NOIR_ABI_DEPTH = 64

/** Whether a JSON value nests deeper than `limit`, walked without recursion (an uploaded ABI may nest deeper than any stack). */
const nestsDeeperThan = (value: unknown, limit: number): boolean => {
  const stack: Array<readonly [unknown, number]> = [[value, 0]]
  while (stack.length > 0) {
    const [next, depth] = stack.pop()!
    if (depth > limit) return true
    if (typeof next === "object" && next !== null) for (const child of Object.values(next)) stack.push([child, depth + 1])
  }
  return false
}

const AbiType: Schema.Schema<NoirAbiType> = Schema.Union(
  Schema.Struct({ kind: Schema.Literal("field") }),
  Schema.Struct({ kind: Schema.Literal("boolean") }),
  Schema.Struct({ kind: Schema.Literal("integer"), sign: Schema.Literal("unsigned", "signed"), width: Schema.Int }),
  Schema.Struct({ kind: Schema.Literal("array"), length: Schema.NonNegativeInt, type: Schema.suspend(() => AbiType) }),
  Schema.Struct({ kind: Schema.Literal("string"), length: Schema.NonNegativeInt }),
  Schema.Struct({
    kind: Schema.Literal("struct"),
    path: Schema.String,
    fields: Schema.Array(Schema.Struct({ name: Schema.String, type: Schema.suspend(() => AbiType) }))
  }),
  Schema.Struct({ kind: Schema.Literal("tuple"), fields: Schema.Array(Schema.suspend(() => AbiType)) })
)

const Abi = Schema.Struct({
  parameters: Schema.Array(Schema.Struct({ name: Schema.String, type: AbiType, visibility: Schema.String })),
  return_type: Schema.NullOr(Schema.Struct({ abi_type: AbiType, visibility: Schema.String }))
})

/** How many values a type holds (an array's length times its element's), stopping past the limit. */
const valueCount = (type: NoirAbiType): number =>
  type.kind === "array"
    ? type.length === 0 ? 0 : Math.min(MAX_NOIR_ABI_VALUES + 1, type.length * valueCount(type.type))
    : type.kind === "struct"
    ? type.fields.reduce((sum, field) => Math.min(MAX_NOIR_ABI_VALUES + 1, sum + valueCount(field.type)), 0)
    : type.kind === "tuple"
    ? type.fields.reduce((sum, field) => Math.min(MAX_NOIR_ABI_VALUES + 1, sum + valueCount(field)), 0)
    : 1

/**
 * A program's ABI as noirc writes it, checked before anything reads it (a prebuilt program's ABI is
 * the uploader's JSON) and returned unchanged. A NoirAbiError says what is wrong with it.
 */
export const readNoirAbi = (abi: unknown): NoirAbi => {
  if (nestsDeeperThan(abi, MAX_NOIR_ABI_DEPTH)) throw new NoirAbiError(`the program's abi nests deeper than ${MAX_NOIR_ABI_DEPTH} levels`)
  const decoded = Schema.decodeUnknownEither(Abi)(abi)
  if (Either.isLeft(decoded)) throw new NoirAbiError(`the program's abi is not one noirc writes: ${ParseResult.TreeFormatter.formatErrorSync(decoded.left)}`)
  const types = [...decoded.right.parameters.map((p) => p.type), ...(decoded.right.return_type === null ? [] : [decoded.right.return_type.abi_type])]
  const values = types.reduce((sum, type) => sum + valueCount(type), 0)
  if (values > MAX_NOIR_ABI_VALUES) throw new NoirAbiError(`the program's parameters and return value hold more than ${MAX_NOIR_ABI_VALUES} values`)
  // The ABI as given: noir_js reads parts of it this check does not name (`error_types`).
  return abi as NoirAbi
}

// Unsigned integers up to 64 bits are "uint64": the range check before queueing is the widest
// one; noir_js refuses a value over a narrower width (u8, u32) when it encodes the witness.
const scalarKind = (type: NoirAbiType, where: string): CircuitInputKind => {
  switch (type.kind) {
    case "field":
      return "field"
    case "boolean":
      return "bit"
    case "integer":
      if (type.sign === "unsigned" && type.width <= 64) return "uint64"
      throw new NoirAbiError(`${where}: ${type.sign} ${type.width}-bit integers are not supported (unsigned up to 64 bits are)`)
    default:
      throw new NoirAbiError(`${where}: ${type.kind} values are not supported (fields, booleans, unsigned integers and arrays of them are)`)
  }
}

const shape = (type: NoirAbiType, where: string): { kind: CircuitInputKind; dimensions: Array<number> } => {
  if (type.kind !== "array") return { kind: scalarKind(type, where), dimensions: [] }
  const inner = shape(type.type, where)
  return { kind: inner.kind, dimensions: [type.length, ...inner.dimensions] }
}

/** The program's parameters as CircuitInput, in ABI order; a NoirAbiError names the first unsupported one. */
export const noirCircuitInputs = (abi: NoirAbi): Array<CircuitInput> =>
  abi.parameters.map((p) => ({
    name: p.name,
    visibility: p.visibility === "public" ? "public" : "private",
    ...shape(p.type, `parameter ${p.name}`)
  }))

const flatNames = (name: string, type: NoirAbiType): Array<string> => {
  if (type.kind !== "array") return [name]
  return Array.from({ length: type.length }, (_, i) => flatNames(`${name}[${i}]`, type.type)).flat()
}

/**
 * Names of the values a proof's public inputs carry, in order: public parameters in ABI order,
 * array elements as `name[i][j]`, then a public return value as `return` (`return[i]`).
 */
export const noirPublicSignals = (abi: NoirAbi): Array<string> => {
  const names = abi.parameters.filter((p) => p.visibility === "public").flatMap((p) => {
    shape(p.type, `parameter ${p.name}`)
    return flatNames(p.name, p.type)
  })
  if (abi.return_type !== null && abi.return_type.visibility === "public") {
    shape(abi.return_type.abi_type, "the return value")
    names.push(...flatNames("return", abi.return_type.abi_type))
  }
  return names
}
