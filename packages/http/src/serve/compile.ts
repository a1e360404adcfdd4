import { HttpApi, type HttpApiEndpoint, HttpApiError, HttpApiSchema } from "@effect/platform"
import type { Scope } from "@mzk/core"
import { Context, type Effect, Option, type ParseResult, Schema, SchemaAST as AST } from "effect"
import { Authentication, IdempotentEndpoint, MeteredEndpoint, QueryPrefixes, ReplayWithout, RequiredScope } from "../api/annotations.js"
import { wireErrorOf } from "../api/errors.js"
import { isDownloadAst } from "../api/download.js"
import { isStagedFileAst, isUploadedFileAst } from "../api/upload.js"
import type { AnyHandler, GroupImplementation } from "../handlers/handler.js"
import { JSON_HEADERS, TEXT_HEADERS } from "../wire/message.js"
import type { FormPartSpec, FormSpec } from "../wire/multipart.js"
import { makeErrorEncoder, makeResponseBody, type ErrorEncoder } from "./encode.js"

export type Decode = (input: unknown) => Effect.Effect<unknown, ParseResult.ParseError>

/**
 * What an endpoint's query may hold: its schema's names, and the bracketed families it declares.
 * Declared here with the rest of a compiled endpoint, not by the stage that checks it: the stages
 * read what compiling decided, and compiling knows nothing of the stages.
 */
export interface QueryNames {
  readonly names: ReadonlySet<string>
  /** `metadata` admits `metadata[<key>]`. */
  readonly prefixes: ReadonlyArray<string>
}

/** One endpoint, everything about it decided once: what the dispatcher runs per request. */
export interface CompiledEndpoint {
  readonly _tag: "Endpoint"
  /** `group.endpoint`, as errors and logs name it. */
  readonly name: string
  readonly method: string
  readonly path: string
  /** Takes a bearer token (the `Authentication` middleware). */
  readonly secured: boolean
  readonly scope: Scope | undefined
  readonly metered: boolean
  /** Takes an `Idempotency-Key` (every POST). */
  readonly idempotent: boolean
  /** Success body fields kept as null for replays (`ReplayWithout`). */
  readonly replayWithout: ReadonlyArray<string>
  readonly decodePath: Decode | undefined
  readonly decodeUrlParams: Decode | undefined
  /** The query parameters it takes; any other is a 400. */
  readonly query: QueryNames
  readonly decodePayload: Decode | undefined
  /**
   * Where the body is a `multipart/form-data` upload: its form and its size limit. Undefined for
   * every other endpoint, whose body (if any) is JSON within `MAX_BODY_BYTES`.
   */
  readonly upload: { readonly form: FormSpec; readonly limitBytes: number } | undefined
  readonly successBody: (value: unknown) => string
  /** The success answer's headers: its content type (JSON, or text for a text body). */
  readonly successHeaders: Readonly<Record<string, string>>
  readonly status: number
  /** Answers without a body (204). */
  readonly empty: boolean
  /** Answers with a file (`DownloadedFile`), served with its validators and ranges by `serve/download.ts`. */
  readonly download: boolean
  readonly handler: AnyHandler
}

export interface CompileOptions {
  /** The size limit of every multipart upload (default 50 MiB, as `CircuitsConfig.maxUploadBytes`). */
  readonly uploadLimitBytes?: number
}

export const DEFAULT_UPLOAD_LIMIT_BYTES = 50 * 1024 * 1024

export interface CompiledApi {
  readonly endpoints: ReadonlyArray<CompiledEndpoint>
  readonly errors: ErrorEncoder
}

/** The API declares something the dispatcher does not serve; raised at start-up, naming the endpoint. */
export class UnservableApi extends Error {
  override readonly name = "UnservableApi"
}

/** The only middleware the dispatcher implements; it checks the bearer token itself. */
const SERVED_MIDDLEWARE: ReadonlySet<unknown> = new Set([Authentication])

const decoder = (schema: Option.Option<Schema.Schema.Any>): Decode | undefined =>
  Option.isSome(schema) ? (Schema.decodeUnknown(schema.value as Schema.Schema<unknown, unknown>) as Decode) : undefined

/** The names a query schema takes, as they are sent (encoded), and the bracketed families the endpoint admits. */
const queryNamesOf = (schema: Option.Option<Schema.Schema.Any>, prefixes: ReadonlyArray<string>): QueryNames => ({
  names: new Set(
    Option.isSome(schema) ? AST.getPropertySignatures(AST.encodedAST(schema.value.ast)).map((property) => String(property.name)) : []
  ),
  prefixes
})

const declaresTag = (errors: ReadonlyMap<number, { readonly ast: Option.Option<AST.AST> }>, tag: string) => {
  const has = (ast: AST.AST): boolean => wireErrorOf(ast)?.tag === tag || (ast._tag === "Union" && ast.types.some(has))
  return [...errors.values()].some(({ ast }) => Option.isSome(ast) && has(ast.value))
}

const DEFAULT_MAX_PARTS = 1000
const DEFAULT_MAX_FIELD_BYTES = 64 * 1024

const withoutUndefined = (ast: AST.AST): AST.AST => {
  if (ast._tag !== "Union") return ast
  const types = ast.types.filter((type) => type._tag !== "UndefinedKeyword")
  return types.length === 1 ? types[0]! : ast
}

/**
 * The form of a multipart payload, from its schema: each property a text field or an
 * `UploadedFile`, an array of either a repeated part. Throws the reason it cannot be served.
 */
const formOf = (ast: AST.AST, limits: NonNullable<ReturnType<typeof HttpApiSchema.getMultipart>>): FormSpec => {
  if (ast._tag !== "TypeLiteral" || ast.indexSignatures.length > 0) throw "its multipart form is not a struct of named parts"
  if (limits.maxFileSize !== undefined || limits.maxTotalSize !== undefined || limits.fieldMimeTypes !== undefined) {
    throw "its multipart form sets maxFileSize, maxTotalSize or fieldMimeTypes; an upload's size is its endpoint's limit, a setting"
  }
  const parts = new Map<string, FormPartSpec>()
  for (const property of ast.propertySignatures) {
    const type = withoutUndefined(property.type)
    const repeated = type._tag === "TupleType" && type.elements.length === 0 && type.rest.length === 1
    const item = repeated ? withoutUndefined((type as AST.TupleType).rest[0]!.type) : type
    // `UploadedFile | string`: a file, or a text field (one part, either way).
    const orText = item._tag === "Union" && item.types.length === 2 && item.types.some(isUploadedFileAst) &&
      item.types.some((type) => !isUploadedFileAst(type) && type._tag !== "Declaration")
    const staged = isStagedFileAst(item)
    const file = staged || orText || isUploadedFileAst(item)
    if (!file && item._tag === "Declaration") {
      throw `its form part ${String(property.name)} is a file of another kind than UploadedFile or StagedFile`
    }
    if (staged && repeated) throw `its form part ${String(property.name)} is a repeated StagedFile; staged parts are sent once`
    if (orText && repeated) throw `its form part ${String(property.name)} is a repeated file-or-text part; such a part is sent once`
    parts.set(String(property.name), staged ? { file, repeated, staged } : orText ? { file, repeated, orText } : { file, repeated })
  }
  const maxFieldSize = limits.maxFieldSize === undefined ? DEFAULT_MAX_FIELD_BYTES : Number(limits.maxFieldSize)
  return {
    parts,
    maxParts: Option.getOrElse(limits.maxParts ?? Option.none(), () => DEFAULT_MAX_PARTS),
    maxFieldBytes: Number.isFinite(maxFieldSize) ? maxFieldSize : DEFAULT_MAX_FIELD_BYTES
  }
}

/**
 * Every HttpApi declares the platform's `HttpApiDecodeError` (400); the dispatcher answers decoding
 * failures with `invalid_request` instead, so that schema is the one error without mzk's envelope
 * it tolerates.
 */
const PLATFORM_DECODE_ERROR = HttpApiError.HttpApiDecodeError.ast

const untaggedError = (errors: ReadonlyMap<number, { readonly ast: Option.Option<AST.AST> }>) => {
  const find = (ast: AST.AST): AST.AST | undefined =>
    ast._tag === "Union"
      ? ast.types.map(find).find((a) => a !== undefined)
      : wireErrorOf(ast) === undefined && ast !== PLATFORM_DECODE_ERROR ? ast : undefined
  for (const { ast } of errors.values()) {
    const found = Option.isSome(ast) ? find(ast.value) : undefined
    if (found !== undefined) return found
  }
  return undefined
}

/**
 * Reads `api` through `HttpApi.reflect` and pairs every endpoint with its handler, building its
 * decoders and encoders once. Whatever the API declares that this dispatcher does not serve (header
 * schemas, bodies other than JSON and multipart forms of `UploadedFile`s, middleware other than
 * `Authentication`, several success statuses, optional path parameters, error schemas without the
 * envelope) is refused here, at start-up, with the endpoint's name, instead of compiling into the
 * OpenAPI document and the client and then misbehaving at run time. So are a missing or an extra
 * handler.
 */
export const compileApi = (
  api: HttpApi.HttpApi.Any,
  implementations: ReadonlyArray<GroupImplementation>,
  options: CompileOptions = {}
): CompiledApi => {
  const uploadLimitBytes = options.uploadLimitBytes ?? DEFAULT_UPLOAD_LIMIT_BYTES
  const handlers = new Map<string, AnyHandler>()
  for (const { group, handlers: byName } of implementations) {
    for (const [name, handler] of Object.entries(byName)) handlers.set(`${group}.${name}`, handler)
  }
  const endpoints: Array<CompiledEndpoint> = []
  const refuse = (name: string, why: string): never => {
    throw new UnservableApi(`Endpoint ${name} cannot be served: ${why}`)
  }
  HttpApi.reflect(api as never, {
    onGroup: () => undefined,
    onEndpoint: ({ endpoint, errors, group, mergedAnnotations, middleware, payloads, successes }) => {
      const e = endpoint as unknown as HttpApiEndpoint.HttpApiEndpoint.AnyWithProps
      const name = `${group.identifier}.${e.name}`
      if (Option.isSome(e.headersSchema)) refuse(name, "it declares a header schema (setHeaders); the dispatcher decodes no headers")
      for (const used of middleware) {
        if (!SERVED_MIDDLEWARE.has(used)) refuse(name, `it uses the middleware ${used.key}, which the dispatcher does not implement`)
      }
      let upload: CompiledEndpoint["upload"]
      for (const [contentType, { ast, encoding }] of payloads) {
        if (HttpApiSchema.getMultipartStream(ast) !== undefined) {
          refuse(name, "its body is a multipart stream; the dispatcher reads multipart forms whole (HttpApiSchema.Multipart)")
        }
        const multipart = HttpApiSchema.getMultipart(ast)
        if (multipart !== undefined) {
          try {
            upload = { form: formOf(ast, multipart), limitBytes: uploadLimitBytes }
          } catch (why) {
            refuse(name, String(why))
          }
        } else if (encoding.kind !== "Json") {
          refuse(name, `its body is ${contentType} (${encoding.kind}); the dispatcher reads JSON bodies and multipart forms only`)
        }
      }
      if (upload !== undefined && !declaresTag(errors, "UploadTooLarge")) {
        refuse(name, "it takes an upload but does not declare its 413 (UploadTooLargeWire)")
      }
      if (successes.size !== 1) refuse(name, `it declares ${successes.size} success responses; the dispatcher answers with one`)
      const success = [...successes.values()][0]!
      const successKind = Option.isSome(success.ast) ? HttpApiSchema.getEncoding(success.ast.value).kind : "Json"
      const download = Option.isSome(success.ast) && isDownloadAst(success.ast.value)
      if (successKind !== "Json" && successKind !== "Text" && !download) {
        refuse(name, `its success body is ${successKind}; the dispatcher answers JSON, text or a DownloadedFile`)
      }
      if (/:\w+\?/.test(e.path)) refuse(name, "it has an optional path parameter; the router matches required ones only")
      const untagged = untaggedError(errors)
      if (untagged !== undefined) refuse(name, `it declares an error schema (${String(untagged)}) without mzk's error envelope`)
      const secured = (middleware as ReadonlySet<unknown>).has(Authentication)
      const scope = Option.getOrUndefined(Context.getOption(mergedAnnotations, RequiredScope))
      if (scope !== undefined && !secured) refuse(name, "it requires a scope but takes no bearer token (Authentication)")
      const metered = Option.getOrElse(Context.getOption(mergedAnnotations, MeteredEndpoint), () => false)
      if (metered !== declaresTag(errors, "RateLimitExceeded")) {
        refuse(name, "a metered endpoint declares its 429 and only a metered one does (use `metered`)")
      }
      const idempotent = Option.getOrElse(Context.getOption(mergedAnnotations, IdempotentEndpoint), () => false)
      if (idempotent && e.method !== "POST") refuse(name, "only a POST takes an Idempotency-Key")
      if (idempotent && !secured) refuse(name, "an idempotency key belongs to an account: the endpoint must take a bearer token")
      const handler = handlers.get(name)
      if (handler === undefined) refuse(name, "it has no handler")
      handlers.delete(name)
      endpoints.push({
        _tag: "Endpoint",
        name,
        method: e.method,
        path: e.path,
        secured,
        scope,
        metered,
        idempotent,
        replayWithout: Option.getOrElse(Context.getOption(mergedAnnotations, ReplayWithout), () => []),
        decodePath: decoder(e.pathSchema),
        // Every query parameter is one string; a repeated key arrives as an array and fails its schema.
        decodeUrlParams: decoder(e.urlParamsSchema),
        query: queryNamesOf(e.urlParamsSchema, Option.getOrElse(Context.getOption(mergedAnnotations, QueryPrefixes), () => [])),
        decodePayload: decoder(e.payloadSchema),
        upload,
        successBody: successKind === "Text" ? (value) => value as string : makeResponseBody(e.successSchema),
        successHeaders: successKind === "Text" ? TEXT_HEADERS : JSON_HEADERS,
        status: HttpApiSchema.getStatusSuccess(e.successSchema),
        empty: HttpApiSchema.isVoid(e.successSchema.ast),
        download,
        handler: handler!
      })
    }
  })
  for (const name of handlers.keys()) refuse(name, "a handler is given for it, but the API has no such endpoint")
  return { endpoints, errors: makeErrorEncoder(api) }
}
