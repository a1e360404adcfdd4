import { HttpApi, type OpenApi } from "@effect/platform"
import { Context, Option } from "effect"
import { MeteredEndpoint, RequiredScope } from "./annotations.js"

const RATE_LIMIT_HEADERS = {
  "RateLimit-Policy": {
    description: "The proof rate limits: `\"key\";q=60;w=60, \"daily\";q=5000;w=86400`",
    schema: { type: "string" }
  },
  RateLimit: {
    description: "The tightest policy's remaining budget and seconds to its reset: `\"key\";r=59;t=42`",
    schema: { type: "string" }
  }
} as const

const PLATFORM_DECODE_ERROR = "#/components/schemas/HttpApiDecodeError"

type Operation = {
  description?: string
  security: Array<Record<string, Array<string>>>
  responses: Record<string, {
    description?: string
    headers?: Record<string, unknown>
    content?: Record<string, { schema: { anyOf?: Array<{ $ref?: string }>; $ref?: string } }>
  }>
  [extension: `x-${string}`]: unknown
}

/**
 * The platform declares its `HttpApiDecodeError` on every 400; mzk answers decoding failures with
 * `invalid_request`, so that shape, which no response has, leaves the document.
 */
const withoutPlatformDecodeError = (spec: OpenApi.OpenAPISpec, operation: Operation) => {
  const response = operation.responses["400"]
  for (const content of Object.values(response?.content ?? {})) {
    const members = content.schema.anyOf?.filter((member) => member.$ref !== PLATFORM_DECODE_ERROR)
    if (members === undefined) continue
    content.schema = members.length === 1 ? members[0]! : { anyOf: members }
    response!.description = "The request is malformed or fails validation; `details` names each field"
  }
  const schemas = spec.components.schemas as Record<string, unknown>
  delete schemas.HttpApiDecodeError
  delete schemas.Issue
}

/**
 * What mzk's annotations add to each operation of an API's OpenAPI document: its scope (as the
 * bearer requirement's role, OpenAPI's place for it, in `x-mzk-scope` and in its description) and,
 * where it is metered, the RateLimit response headers and `Retry-After` on 429; and the platform's
 * decode error taken out. An `OpenApi.Transform` of the API, so the served document and the docs
 * page both carry it.
 */
export const describeAnnotations = (api: HttpApi.HttpApi.Any) => (spec: OpenApi.OpenAPISpec): OpenApi.OpenAPISpec => {
  HttpApi.reflect(api as never, {
    onGroup: () => undefined,
    onEndpoint: ({ endpoint, mergedAnnotations }) => {
      const path = endpoint.path.replace(/:(\w+)\??/g, "{$1}")
      const operation = (spec.paths[path] as Record<string, Operation> | undefined)?.[endpoint.method.toLowerCase()]
      if (operation === undefined) return
      withoutPlatformDecodeError(spec, operation)
      Option.map(Context.getOption(mergedAnnotations, RequiredScope), (scope) => {
        operation.security = operation.security.map((requirement) =>
          Object.fromEntries(Object.keys(requirement).map((name) => [name, [scope]]))
        )
        operation["x-mzk-scope"] = scope
        operation.description = `${operation.description ?? ""} Scope: ${scope}.`.trim()
      })
      if (Context.getOption(mergedAnnotations, MeteredEndpoint).pipe(Option.getOrElse(() => false))) {
        operation["x-mzk-metered"] = true
        operation.description = `${operation.description ?? ""} Metered: counts against the proof rate limits.`.trim()
        for (const [status, response] of Object.entries(operation.responses)) {
          if (status.startsWith("2")) response.headers = { ...response.headers, ...RATE_LIMIT_HEADERS }
          if (status === "429") {
            response.headers = {
              ...response.headers,
              ...RATE_LIMIT_HEADERS,
              "Retry-After": { description: "Seconds until the policy that was hit resets", schema: { type: "integer" } }
            }
          }
        }
      }
    }
  })
  return spec
}
