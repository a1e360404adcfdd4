import { HttpApi } from "@effect/platform"
import { Option, ParseResult, Schema, SchemaAST as AST } from "effect"
import { type WireError, wireErrorOf } from "../api/errors.js"
import { JSON_HEADERS, type MzkResponse } from "../wire/message.js"

/** Copies a value keeping only what a schema declares; undefined when the value is kept as it is. */
type Project = ((value: unknown) => unknown) | undefined

const apply = (project: Project, value: unknown) => (project === undefined ? value : project(value))

const isKept = (ast: AST.AST): boolean => {
  switch (ast._tag) {
    case "Literal":
    case "StringKeyword":
    case "NumberKeyword":
    case "BooleanKeyword":
    case "Enums":
    case "TemplateLiteral":
    case "UnknownKeyword":
    case "AnyKeyword":
      return true
    case "Refinement":
      return isKept(ast.from)
    case "Union":
      return ast.types.every(isKept)
    default:
      return false
  }
}

/** The subtrees projection does not cover (transformations, declarations, other unions) encode with Schema. */
const encodeWithSchema = (ast: AST.AST): Project => {
  const encode = ParseResult.encodeUnknownSync(Schema.make(ast))
  return (value) => encode(value)
}

const projectionOf = (ast: AST.AST): Project => {
  if (isKept(ast)) return undefined
  switch (ast._tag) {
    case "Refinement":
      return projectionOf(ast.from)
    case "Suspend": {
      let inner: Project | null = null
      return (value) => apply(inner === null ? (inner = projectionOf(ast.f())) : inner, value)
    }
    case "TupleType": {
      if (ast.elements.length > 0 || ast.rest.length !== 1) return encodeWithSchema(ast)
      const item = projectionOf(ast.rest[0]!.type)
      return item === undefined ? (value) => (value as Array<unknown>).slice() : (value) => (value as Array<unknown>).map(item)
    }
    case "Union": {
      // `X | null`, the shape of every nullable field: null stays null, anything else is an X.
      const others = ast.types.filter((type) => !(type._tag === "Literal" && type.literal === null))
      if (others.length !== ast.types.length - 1 || others.length !== 1) return encodeWithSchema(ast)
      const inner = projectionOf(others[0]!)
      return (value) => (value === null ? null : apply(inner, value))
    }
    case "TypeLiteral": {
      const properties = ast.propertySignatures.map((p) => ({ name: p.name, project: projectionOf(p.type) }))
      const [index, ...moreIndexes] = ast.indexSignatures
      if (moreIndexes.length > 0 || properties.some((p) => typeof p.name !== "string")) return encodeWithSchema(ast)
      const indexed = index === undefined ? undefined : { project: projectionOf(index.type) }
      return (value) => {
        const source = value as Record<string, unknown>
        const out: Record<string, unknown> = {}
        if (indexed !== undefined) {
          for (const key of Object.keys(source)) out[key] = apply(indexed.project, source[key])
        }
        for (const { name, project } of properties) {
          if (Object.hasOwn(source, name)) out[name as string] = apply(project, source[name as string])
        }
        return out
      }
    }
    default:
      return encodeWithSchema(ast)
  }
}

/**
 * A success body as JSON text, holding only the fields its schema declares. Handlers are typed
 * against the same schemas, so a response is not validated again field by field (Schema's encoder
 * did that at about 20 µs a key listing in the server, measured); what the projection keeps is
 * the schema's fields, so a record with more (a hash, a secret) never leaks whole. Parts it does
 * not cover (transformations, declarations, unions other than `X | null`) still go through Schema.
 */
export const makeResponseBody = (schema: Schema.Schema.Any): ((value: unknown) => string) => {
  const project = projectionOf(schema.ast)
  return (value) => JSON.stringify(apply(project, value))
}

/** A failure the API declares: its class's `_tag` names the schema it is encoded with. */
export interface DeclaredError {
  readonly _tag: string
  readonly message: string
}

/** Encodes a failure as its response, or undefined when the API declares no schema for it. */
export type ErrorEncoder = (error: DeclaredError, requestId: string) => (MzkResponse & { readonly body: string }) | undefined

/** Every wire error of `api` (API, group, middleware and endpoint level), by the tag it carries. */
const wireErrorsOf = (api: HttpApi.HttpApi.Any): ReadonlyMap<string, WireError> => {
  const found = new Map<string, WireError>()
  const collect = (ast: AST.AST) => {
    if (AST.isUnion(ast)) return ast.types.forEach(collect)
    const wire = wireErrorOf(ast)
    if (wire !== undefined && !found.has(wire.tag)) found.set(wire.tag, wire)
  }
  HttpApi.reflect(api as never, {
    onGroup: () => undefined,
    onEndpoint: ({ errors }) => errors.forEach(({ ast }) => Option.map(ast, collect))
  })
  return found
}

/**
 * The error responses of an API, from its own error schemas: the envelope
 * `{"error": {"code", "message", "request_id", "details"?}}` and the status each schema carries,
 * read once here rather than running Schema's encoder per error.
 */
export const makeErrorEncoder = (api: HttpApi.HttpApi.Any): ErrorEncoder => {
  const wires = wireErrorsOf(api)
  return (error, requestId) => {
    const wire = wires.get(error._tag)
    if (wire === undefined) return undefined
    const { details, ...rest } = wire.envelope(error).error
    const body = JSON.stringify({ error: { ...rest, request_id: requestId, ...(details === undefined ? {} : { details }) } })
    return { status: wire.status, headers: JSON_HEADERS, body }
  }
}
