/**
 * JSON Schema (as the OpenAPI document of `@mzk/http` states it) → TypeScript declarations for the
 * dependency-free packages. Only the subset the document uses is understood; anything else throws,
 * so a new construct in the contract stops `pnpm gen` instead of turning silently into `unknown`.
 */

export interface JsonSchema {
  readonly $ref?: string
  readonly type?: string
  readonly enum?: ReadonlyArray<string | number | boolean | null>
  readonly anyOf?: ReadonlyArray<JsonSchema>
  readonly allOf?: ReadonlyArray<JsonSchema>
  readonly properties?: Readonly<Record<string, JsonSchema>>
  readonly required?: ReadonlyArray<string>
  readonly additionalProperties?: boolean | JsonSchema
  readonly items?: JsonSchema | false
  readonly prefixItems?: ReadonlyArray<JsonSchema>
  readonly description?: string
  readonly format?: string
  readonly [keyword: string]: unknown
}

export interface Document {
  readonly paths: Readonly<Record<string, Readonly<Record<string, Operation>>>>
  readonly components: { readonly schemas: Readonly<Record<string, JsonSchema>> }
  readonly webhooks?: Readonly<Record<string, { readonly post: Operation }>>
}

interface Parameter {
  readonly name: string
  readonly in: string
  readonly required?: boolean
  readonly description?: string
  readonly schema: JsonSchema
}

interface Operation {
  readonly parameters?: ReadonlyArray<Parameter>
  readonly requestBody?: { readonly content: Readonly<Record<string, { readonly schema: JsonSchema }>> }
  readonly responses: Readonly<Record<string, { readonly content?: Readonly<Record<string, { readonly schema: JsonSchema }>> }>>
}

/** A type the generated file names as is (a type of the package's own), in place of a schema. */
export const TS = "x-typescript"
/** An array that holds at least one item, typed as such (queries only: bodies keep the schemas' `ReadonlyArray`). */
export const NON_EMPTY = "x-non-empty"

/** One exported type: its name, the schema it is made from, and what the document does not say about it. */
export interface Declaration {
  readonly name: string
  readonly schema: JsonSchema
  /** The type's doc comment where the schema has no description of its own. */
  readonly doc?: string
  /** A declared interface whose fields this one repeats, named as its base instead of restated. */
  readonly extends?: string
  /** Named for references only; the file's fixed text declares it. */
  readonly declaredElsewhere?: boolean
}

/**
 * The keywords the generator reads or may leave aside: constraints TypeScript cannot state (the
 * doc comment says the bounds) and prose. Any other (`const`, `oneOf`, `not`, …) stops it.
 */
const KEYWORDS = new Set([
  "$ref", "$id", "type", "enum", "anyOf", "allOf", "properties", "required", "additionalProperties", "items", "prefixItems",
  "description", "title", "format", "pattern", "minLength", "maxLength", "minimum", "maximum", "exclusiveMinimum",
  "exclusiveMaximum", "minItems", "maxItems", "maxProperties", "propertyNames", "contentMediaType", "contentSchema", "default", "example", "examples", TS, NON_EMPTY
])

const CONSTRAINTS = new Set(["pattern", "minLength", "maxLength", "minimum", "maximum", "description", "title"])

/** Effect writes these for schemas nobody described; they say less than the type itself. */
const GENERATED_DESCRIPTION = /^(a|an) (string|integer|number|array|non-negative|positive|negative|finite|object to be)\b/

const ownDescription = (schema: JsonSchema): string | undefined =>
  schema.description !== undefined && !GENERATED_DESCRIPTION.test(schema.description) ? schema.description : undefined

/** A nullable field's prose often sits on its value (`NullOr(Timestamp.annotations(…))`), not on the union. */
const describedBy = (schema: JsonSchema): string | undefined => {
  const values = schema.anyOf?.filter((member) => member.type !== "null")
  return ownDescription(schema) ?? (values?.length === 1 ? ownDescription(values[0]!) : undefined)
}

const range = (low: unknown, high: unknown, unit: string) =>
  typeof low === "number" && typeof high === "number" ? `${low} to ${high}${unit}`
  : typeof high === "number" ? `at most ${high}${unit}`
  : typeof low === "number" && low > 0 ? `at least ${low}${unit}`
  : undefined

/** The bounds a field's schema sets, in words: TypeScript cannot say them, the doc comment can. */
const boundsOf = (schema: JsonSchema): string | undefined => {
  const value = schema.anyOf?.filter((member) => member.type !== "null").length === 1
    ? schema.anyOf.find((member) => member.type !== "null")!
    : schema
  if (value.type === "string") return range(value.minLength, value.maxLength, " characters")
  // By keyword, not type: a bounded `Int` is a `$ref` with the bounds beside it.
  if (value.minimum !== undefined || value.maximum !== undefined) return range(value.minimum, value.maximum, "")
  if (value.type === "array" && value.prefixItems === undefined) {
    const items = range(value.minItems, value.maxItems, " items")
    return items === "at least 1 items" ? "at least one item" : items
  }
  return undefined
}

const fieldDoc = (schema: JsonSchema): string | undefined => {
  const parts = [describedBy(schema), boundsOf(schema)].filter((part) => part !== undefined)
  return parts.length === 0 ? undefined : parts.join("; ")
}

const canonical = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(canonical)
  if (value === null || typeof value !== "object") return value
  return Object.fromEntries(
    Object.keys(value)
      .filter((key) => key !== "description" && key !== "title" && key !== "$id")
      .sort()
      .map((key) => [key, canonical((value as Record<string, unknown>)[key])])
  )
}

/** Two schemas are one type when they differ only in their prose. */
export const shapeOf = (schema: JsonSchema): string => JSON.stringify(canonical(schema))

const COMPONENT = "#/components/schemas/"

export const component = (document: Document, name: string): JsonSchema => {
  const schema = document.components.schemas[name]
  if (schema === undefined) throw new Error(`the OpenAPI document has no component ${name}`)
  return schema
}

export const deref = (document: Document, schema: JsonSchema): JsonSchema =>
  schema.$ref === undefined ? schema : deref(document, component(document, schema.$ref.slice(COMPONENT.length)))

const operation = (document: Document, method: string, path: string): Operation => {
  const found = document.paths[path]?.[method.toLowerCase()]
  if (found === undefined) throw new Error(`the OpenAPI document has no ${method} ${path}`)
  return found
}

/** The JSON or multipart body an endpoint takes. */
export const requestBody = (document: Document, method: string, path: string): JsonSchema => {
  const content = operation(document, method, path).requestBody?.content
  const body = content?.["application/json"] ?? content?.["multipart/form-data"]
  if (body === undefined) throw new Error(`${method} ${path} takes no body`)
  return deref(document, body.schema)
}

/** The JSON body of an endpoint's success response. */
export const responseBody = (document: Document, method: string, path: string): JsonSchema => {
  const responses = operation(document, method, path).responses
  const status = Object.keys(responses).find((code) => code.startsWith("2"))
  const body = status === undefined ? undefined : responses[status]?.content?.["application/json"]
  if (body === undefined) throw new Error(`${method} ${path} answers no JSON body`)
  return deref(document, body.schema)
}

/**
 * An endpoint's query parameters as one object schema, as the caller writes them: a number the
 * platform decodes from the query string's text (its `NumberFromString`) is a number, and a
 * repeatable parameter's array a non-empty tuple.
 */
export const queryParameters = (document: Document, method: string, path: string): JsonSchema => {
  const parameters = (operation(document, method, path).parameters ?? []).filter((parameter) => parameter.in === "query")
  if (parameters.length === 0) throw new Error(`${method} ${path} takes no query parameters`)
  const asWritten = (schema: JsonSchema): JsonSchema =>
    schema.type === "string" && schema.description === "a string to be decoded into a number"
      ? { type: "number" }
      : schema.anyOf !== undefined
      ? { ...schema, anyOf: schema.anyOf.map(asWritten) }
      : schema.type === "array" && typeof schema.minItems === "number" && schema.minItems >= 1
      ? { ...schema, [NON_EMPTY]: true }
      : schema
  return {
    type: "object",
    properties: Object.fromEntries(parameters.map((parameter) => [
      parameter.name,
      { ...asWritten(parameter.schema), ...(parameter.description === undefined ? {} : { description: parameter.description }) }
    ])),
    required: parameters.filter((parameter) => parameter.required === true).map((parameter) => parameter.name)
  }
}

/** A multipart form's file parts as the package's own file types; its text fields as they are. */
export const withFiles = (document: Document, form: JsonSchema, file: string, namedFile: string): JsonSchema => {
  const isFile = (schema: JsonSchema) => deref(document, schema).format === "binary"
  return {
    ...form,
    properties: Object.fromEntries(Object.entries(form.properties ?? {}).map(([name, part]) => {
      const description = part.description === undefined ? {} : { description: part.description }
      // A repeated part's files need their names: their paths in the upload.
      if (part.type === "array" && part.items !== undefined && part.items !== false && isFile(part.items)) {
        return [name, { type: "array", items: { [TS]: namedFile }, ...description }]
      }
      // A file or a text field (`main`: a path in the `archive`): the file type, whose content may be a string.
      const fileOrText = part.anyOf !== undefined && part.anyOf.some(isFile) && part.anyOf.every((member) => isFile(member) || deref(document, member).type === "string")
      return [name, isFile(part) || fileOrText ? { [TS]: file, ...description } : part]
    }))
  }
}

export const property = (document: Document, schema: JsonSchema, ...path: ReadonlyArray<string>): JsonSchema =>
  path.reduce((at, name) => {
    const object = deref(document, at)
    const next = object.properties?.[name] ?? (name === "[nonNull]" ? object.anyOf?.find((member) => member.type !== "null") : undefined)
    if (next === undefined) throw new Error(`no ${name} in ${JSON.stringify(object).slice(0, 120)}`)
    return deref(document, next)
  }, schema)

const comment = (text: string | undefined, indent: string): string => {
  if (text === undefined) return ""
  const safe = text.replace(/\*\//g, "*\\/")
  const words = safe.split(/\s+/)
  const lines: Array<string> = []
  let line = ""
  for (const word of words) {
    if (line !== "" && indent.length + 3 + line.length + 1 + word.length > 100) {
      lines.push(line)
      line = word
    } else line = line === "" ? word : `${line} ${word}`
  }
  lines.push(line)
  return lines.length === 1
    ? `${indent}/** ${lines[0]} */\n`
    : `${indent}/**\n${lines.map((l) => `${indent} * ${l}`).join("\n")}\n${indent} */\n`
}

const literal = (value: unknown) => JSON.stringify(value)

const spaced = (expression: string) => (expression.startsWith("\n") ? expression : ` ${expression}`)

const isIdentifier = (name: string) => /^[A-Za-z_$][\w$]*$/.test(name)

/**
 * Emits the declarations in order. A schema shaped like a declared one (by `$ref`, or the same
 * shape inline, as the platform repeats a struct in a response) is written as that name.
 */
export const emitDeclarations = (document: Document, declarations: ReadonlyArray<Declaration>): string => {
  const byShape = new Map<string, string>()
  const byName = new Map<string, Declaration>()
  for (const declaration of declarations) {
    byName.set(declaration.name, declaration)
    const shape = shapeOf(deref(document, declaration.schema))
    // A bare `string` or `number` names nothing: every such field would take the name.
    if (shape === shapeOf({ type: "string" }) || shape === shapeOf({ type: "number" }) || shape === shapeOf({ type: "integer" })) {
      throw new Error(`${declaration.name} is a bare primitive`)
    }
    if (!byShape.has(shape)) byShape.set(shape, declaration.name)
  }

  const objectBody = (schema: JsonSchema, indent: string, skip: ReadonlySet<string>): string => {
    const required = new Set(schema.required ?? [])
    const lines: Array<string> = []
    for (const [name, field] of Object.entries(schema.properties ?? {})) {
      if (skip.has(name)) continue
      const doc = fieldDoc(field)
      const key = isIdentifier(name) ? name : literal(name)
      lines.push(`${comment(doc, indent)}${indent}readonly ${key}${required.has(name) ? "" : "?"}:${spaced(expression(field, indent, undefined))}`)
    }
    const extra = schema.additionalProperties
    if (typeof extra === "object") lines.push(`${indent}readonly [key: string]: ${expression(extra, indent, undefined)}`)
    else if (lines.length === 0 && extra !== false) lines.push(`${indent}readonly [field: string]: unknown`)
    return lines.join("\n")
  }

  const expression = (schema: JsonSchema, indent: string, root: string | undefined): string => {
    const unknownKeyword = Object.keys(schema).find((keyword) => !KEYWORDS.has(keyword))
    if (unknownKeyword !== undefined) throw new Error(`no TypeScript for ${unknownKeyword} in ${JSON.stringify(schema).slice(0, 200)}`)
    // A `$ref` with its own description is written `allOf: [{ $ref }]`: the referenced type.
    if (schema.allOf?.length === 1 && schema.allOf[0]!.$ref !== undefined && schema.type === undefined) {
      return expression(schema.allOf[0]!, indent, root)
    }
    // Effect adds a second `pattern` through `allOf`; anything more would be an intersection.
    if (schema.allOf?.some((member) => Object.keys(member).some((keyword) => !CONSTRAINTS.has(keyword))) === true) {
      throw new Error(`no TypeScript for an allOf in ${JSON.stringify(schema).slice(0, 200)}`)
    }
    const named = byShape.get(shapeOf(schema))
    if (named !== undefined && named !== root) return named
    if (typeof schema[TS] === "string") return schema[TS]
    if (schema.$ref !== undefined) return expression(deref(document, schema), indent, root)
    if (schema.anyOf !== undefined) {
      const members = [...new Set(schema.anyOf.map((member) => expression(member, indent, undefined)))]
      return members.map((member) => (member.includes("=>") ? `(${member})` : member)).join(" | ")
    }
    if (schema.enum !== undefined) {
      const members = schema.enum.map(literal)
      const line = members.join(" | ")
      // A long union reads better one member a line, as a person would have written it.
      return indent.length + line.length > 90 ? `\n${members.map((member) => `${indent}  | ${member}`).join("\n")}` : line
    }
    switch (schema.type) {
      case "string":
        return "string"
      case "integer":
      case "number":
        return "number"
      case "boolean":
        return "boolean"
      case "null":
        return "null"
      case "array": {
        if (schema.prefixItems !== undefined) {
          if (schema.items !== false) throw new Error("a tuple with a rest element")
          const inner = `${indent}  `
          return `readonly [\n${schema.prefixItems.map((item) => `${comment(describedBy(item), inner)}${inner}${expression(item, inner, undefined)}`).join(",\n")}\n${indent}]`
        }
        if (schema.items === undefined || schema.items === false) throw new Error("an array without items")
        const item = expression(schema.items, indent, undefined)
        return schema[NON_EMPTY] === true ? `readonly [${item}, ...Array<${item}>]` : `ReadonlyArray<${item}>`
      }
      case "object": {
        const inner = `${indent}  `
        return `{\n${objectBody(schema, inner, new Set())}\n${indent}}`
      }
      case undefined:
        if (Object.keys(canonical(schema) as object).length === 0) return "unknown"
    }
    throw new Error(`no TypeScript for ${JSON.stringify(schema).slice(0, 200)}`)
  }

  const declare = (declaration: Declaration): string => {
    const schema = deref(document, declaration.schema)
    const described = describedBy(declaration.schema) ?? describedBy(schema)
    // The document's own words win; a table's doc that would never show is a stale one.
    if (described !== undefined && declaration.doc !== undefined) throw new Error(`${declaration.name}: the schema has a description, drop the doc`)
    const doc = comment(described ?? declaration.doc, "")
    if (schema.type === "object" && schema.properties !== undefined && Object.keys(schema.properties).length > 0) {
      let skip = new Set<string>()
      let heading = `export interface ${declaration.name}`
      if (declaration.extends !== undefined) {
        const base = byName.get(declaration.extends)
        if (base === undefined) throw new Error(`${declaration.name} extends ${declaration.extends}, which is not declared`)
        const baseSchema = deref(document, base.schema)
        const required = new Set(schema.required ?? [])
        for (const [name, field] of Object.entries(baseSchema.properties ?? {})) {
          const own = schema.properties[name]
          if (own === undefined || shapeOf(own) !== shapeOf(field) || required.has(name) !== (baseSchema.required ?? []).includes(name)) {
            throw new Error(`${declaration.name} does not repeat ${declaration.extends}.${name}`)
          }
        }
        skip = new Set(Object.keys(baseSchema.properties ?? {}))
        heading += ` extends ${declaration.extends}`
      }
      return `${doc}${heading} {\n${objectBody(schema, "  ", skip)}\n}\n`
    }
    return `${doc}export type ${declaration.name} =${spaced(expression(schema, "", declaration.name))}\n`
  }

  return declarations.filter((declaration) => declaration.declaredElsewhere !== true).map(declare).join("\n")
}
