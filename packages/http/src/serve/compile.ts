import { HttpApi, type HttpApiEndpoint, HttpApiError, HttpApiSchema } from "@effect/platform"
import type { Scope } from "@mzk/core"
import { Context, type Effect, Option, type ParseResult, Schema, type SchemaAST as AST } from "effect"
import { Authentication, MeteredEndpoint, RequiredScope } from "../api/annotations.js"
import { wireErrorOf } from "../api/errors.js"
import type { AnyHandler, GroupImplementation } from "../handlers/handler.js"
import { makeErrorEncoder, makeResponseBody, type ErrorEncoder } from "./encode.js"

type Decode = (input: unknown) => Effect.Effect<unknown, ParseResult.ParseError>

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
  readonly decodePath: Decode | undefined
  readonly decodeUrlParams: Decode | undefined
  readonly decodePayload: Decode | undefined
  readonly successBody: (value: unknown) => string
  readonly status: number
  /** Answers without a body (204). */
  readonly empty: boolean
  readonly handler: AnyHandler
}

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

const declaresTag = (errors: ReadonlyMap<number, { readonly ast: Option.Option<AST.AST> }>, tag: string) => {
  const has = (ast: AST.AST): boolean => wireErrorOf(ast)?.tag === tag || (ast._tag === "Union" && ast.types.some(has))
  return [...errors.values()].some(({ ast }) => Option.isSome(ast) && has(ast.value))
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
 * schemas, bodies other than JSON such as multipart uploads, middleware other than
 * `Authentication`, several success statuses, optional path parameters, error schemas without the
 * envelope) is refused here, at start-up, with the endpoint's name, instead of compiling into the
 * OpenAPI document and the client and then misbehaving at run time. So are a missing or an extra
 * handler.
 */
export const compileApi = (api: HttpApi.HttpApi.Any, implementations: ReadonlyArray<GroupImplementation>): CompiledApi => {
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
      for (const [contentType, { ast, encoding }] of payloads) {
        if (HttpApiSchema.getMultipart(ast) !== undefined || HttpApiSchema.getMultipartStream(ast) !== undefined) {
          refuse(name, "its body is multipart; the dispatcher reads JSON bodies only (multipart uploads are not served yet)")
        }
        if (encoding.kind !== "Json") refuse(name, `its body is ${contentType} (${encoding.kind}); the dispatcher reads JSON bodies only`)
      }
      if (successes.size !== 1) refuse(name, `it declares ${successes.size} success responses; the dispatcher answers with one`)
      const success = [...successes.values()][0]!
      if (Option.isSome(success.ast) && HttpApiSchema.getEncoding(success.ast.value).kind !== "Json") {
        refuse(name, "its success body is not JSON")
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
        decodePath: decoder(e.pathSchema),
        // Every query parameter is one string; a repeated key arrives as an array and fails its schema.
        decodeUrlParams: decoder(e.urlParamsSchema),
        decodePayload: decoder(e.payloadSchema),
        successBody: makeResponseBody(e.successSchema),
        status: HttpApiSchema.getStatusSuccess(e.successSchema),
        empty: HttpApiSchema.isVoid(e.successSchema.ast),
        handler: handler!
      })
    }
  })
  for (const name of handlers.keys()) refuse(name, "a handler is given for it, but the API has no such endpoint")
  return { endpoints, errors: makeErrorEncoder(api) }
}
