import { HttpApi, type OpenApi, OpenApiJsonSchema } from "@effect/platform"
import {
  DEFAULT_WEBHOOK_CONFIG,
  EVENT_DATA,
  EVENT_TYPES,
  EventId,
  type EventType,
  SIGNATURE_HEADER,
  STANDARD_WEBHOOK_ID_HEADER,
  STANDARD_WEBHOOK_SIGNATURE_HEADER,
  STANDARD_WEBHOOK_TIMESTAMP_HEADER,
  Timestamp,
  UNSUBSCRIBABLE_EVENT_TYPES
} from "@mzk/core"
import { Context, Option, Schema, SchemaAST as AST } from "effect"
import { IdempotentEndpoint, MeteredEndpoint, RequiredScope } from "./annotations.js"
import { DOWNLOAD_HEADERS, DOWNLOAD_PARAMETERS, isDownloadAst } from "./download.js"

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

const IDEMPOTENCY_KEY = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  description: "Makes the request safe to retry: the first response to a key (status and body, errors included, except 400, 429 " +
    "and 503) is kept for 24 hours per account and replayed to every retry with the same key and request, which then runs " +
    "nothing and costs no rate limit or quota. The same key with another method, path or body is 422 " +
    "`idempotency_key_reused`; a retry while the first request is still running is 409 `idempotency_key_in_use`. For an " +
    "upload, the key covers the path and the body's length. Use a fresh random value (a UUID) per intended request.",
  schema: { type: "string", minLength: 1, maxLength: 255 }
}

const REPLAY_HEADERS = {
  "Idempotent-Replayed": { description: "`true` when this is the kept response of an earlier request with the same Idempotency-Key", schema: { type: "string", enum: ["true"] } },
  "Original-Request": { description: "On a replay: the Request-Id of the request that made the response", schema: { type: "string" } }
} as const

const PLATFORM_DECODE_ERROR = "#/components/schemas/HttpApiDecodeError"

type Operation = {
  description?: string
  parameters?: Array<Record<string, unknown>>
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
 * Query parameters named by a pattern, as `metadata[<key>]` (an index signature of the query's
 * schema whose key is a template literal), which the platform leaves out of the document: each as
 * one OpenAPI `deepObject` parameter (`metadata[order]=1&metadata[tier]=gold`), the standard form of
 * bracketed keys, which generators and the client turn into an object.
 */
const bracketedParameters = (schema: Schema.Schema.All | undefined): Array<Record<string, unknown>> => {
  if (schema === undefined) return []
  let ast = schema.ast
  while (ast._tag === "Refinement" || ast._tag === "Transformation") ast = ast._tag === "Refinement" ? ast.from : ast.from
  if (ast._tag !== "TypeLiteral") return []
  return ast.indexSignatures.flatMap((signature) => {
    const parameter = signature.parameter
    if (parameter._tag !== "TemplateLiteral" || !parameter.head.endsWith("[")) return []
    const description = Option.getOrUndefined(AST.getDescriptionAnnotation(signature.type))
    return [{
      name: parameter.head.slice(0, -1),
      in: "query",
      required: false,
      style: "deepObject",
      explode: true,
      ...(description === undefined ? {} : { description }),
      schema: { type: "object", additionalProperties: { type: "string" } }
    }]
  })
}

/**
 * A download's conditional and range headers, and the answers they bring besides the 200 (206, 304,
 * 416), which the platform cannot declare: an endpoint has one success response.
 */
const describeDownload = (operation: Operation) => {
  operation.parameters = [...(operation.parameters ?? []), ...DOWNLOAD_PARAMETERS]
  const ok = operation.responses["200"]
  if (ok !== undefined) {
    ok.description = "The whole file"
    ok.headers = { ...ok.headers, ...DOWNLOAD_HEADERS }
    operation.responses["206"] = {
      description: "The byte range `Range` asked for",
      headers: {
        ...DOWNLOAD_HEADERS,
        "Content-Range": { description: "`bytes <first>-<last>/<size>`", schema: { type: "string" } }
      },
      ...(ok.content === undefined ? {} : { content: ok.content })
    }
  }
  operation.responses["304"] = {
    description: "`If-None-Match` holds the file's ETag: the copy held is current",
    headers: { ETag: DOWNLOAD_HEADERS.ETag }
  }
  const refused = operation.responses["416"]
  if (refused !== undefined) {
    refused.headers = { ...refused.headers, "Content-Range": { description: "`bytes */<size>`: the file's size", schema: { type: "string" } } }
  }
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
      const bracketed = bracketedParameters(Option.getOrUndefined(endpoint.urlParamsSchema))
      if (bracketed.length > 0) operation.parameters = [...(operation.parameters ?? []), ...bracketed]
      Option.map(Context.getOption(mergedAnnotations, RequiredScope), (scope) => {
        operation.security = operation.security.map((requirement) =>
          Object.fromEntries(Object.keys(requirement).map((name) => [name, [scope]]))
        )
        operation["x-mzk-scope"] = scope
        operation.description = `${operation.description ?? ""} Scope: ${scope}.`.trim()
      })
      if (isDownloadAst(endpoint.successSchema.ast)) describeDownload(operation)
      if (Context.getOption(mergedAnnotations, IdempotentEndpoint).pipe(Option.getOrElse(() => false))) {
        operation.parameters = [...(operation.parameters ?? []), IDEMPOTENCY_KEY]
        for (const [status, response] of Object.entries(operation.responses)) {
          if (status.startsWith("2")) response.headers = { ...response.headers, ...REPLAY_HEADERS }
        }
      }
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

/** `proof.completed` → `ProofCompletedEvent`: a component name for the event's payload. */
const eventSchemaName = (type: EventType) =>
  `${type.split(/[._]/).map((word) => word.charAt(0).toUpperCase() + word.slice(1)).join("")}Event`

const seconds = (ms: number) => (ms % 3_600_000 === 0 ? `${ms / 3_600_000} h` : ms % 60_000 === 0 ? `${ms / 60_000} min` : `${ms / 1000} s`)

const SIGNATURE_DESCRIPTION = "`t=<unix seconds>,v1=<hex>`, with one `v1` per live signing secret: each is the lowercase hex " +
  "HMAC-SHA256, keyed with the whole secret string (`whsec_…`, as returned when the webhook was created or its secret rotated), " +
  "of `<t>.<body>`, the body exactly as received. Accept the delivery when any `v1` matches: during a rotation's overlap there " +
  "are two (`t=…,v1=<new>,v1=<old>`), so a receiver holding either secret verifies it. Recompute it before parsing the JSON, " +
  "compare in constant time, and refuse a `t` more than 300 seconds from your clock. Each attempt is signed anew with its own " +
  "`t`. `@mzk/webhooks`' `constructEvent` and Stripe's `stripe.webhooks.constructEvent` check exactly this."

/** The Standard Webhooks headers (standardwebhooks.com), sent beside `Service-Signature` over the same timestamp. */
const STANDARD_WEBHOOK_HEADERS = [
  {
    name: STANDARD_WEBHOOK_ID_HEADER,
    in: "header",
    required: true,
    description: "Standard Webhooks' message id: the event's id (`evt_…`), the same on every attempt; deduplicate on it",
    schema: { type: "string", pattern: "^evt_[0-9a-z]{26}$" }
  },
  {
    name: STANDARD_WEBHOOK_TIMESTAMP_HEADER,
    in: "header",
    required: true,
    description: "Unix seconds when this attempt was signed: the same as `t` in `Service-Signature`",
    schema: { type: "string", pattern: "^\\d+$" }
  },
  {
    name: STANDARD_WEBHOOK_SIGNATURE_HEADER,
    in: "header",
    required: true,
    description: "Standard Webhooks signatures: space-separated `v1,<base64>` entries, one per live signing secret, each the " +
      "base64 HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>` keyed with the bytes that the secret's base64 part " +
      "(after `whsec_`) encodes. The `standardwebhooks` libraries verify it unchanged, with the whole `whsec_…` secret: " +
      "`new Webhook(secret).verify(body, headers)`.",
    schema: { type: "string", pattern: "^v1,[A-Za-z0-9+/]{43}=( v1,[A-Za-z0-9+/]{43}=)*$" }
  }
]

/** Who receives an event of `type`: its subscribers, or for a type no webhook subscribes to, the one webhook it concerns. */
const recipients = (type: EventType) =>
  (UNSUBSCRIBABLE_EVENT_TYPES as ReadonlyArray<EventType>).includes(type)
    ? `Sent as a POST only to the webhook \`POST /api/v1/webhooks/{id}/test\` tests, whatever it subscribes to; no webhook can subscribe to \`${type}\`.`
    : `Sent as a POST to every active webhook of the account subscribed to \`${type}\`.`

/**
 * The OpenAPI 3.1 `webhooks` section: one entry per event type mzk delivers, its body the event
 * envelope with that type's `data` (from the core's `EVENT_DATA`, so a new event type is documented
 * as soon as it exists), how a receiver checks either signature scheme, and what its answers do.
 */
export const describeWebhooks = (spec: OpenApi.OpenAPISpec): OpenApi.OpenAPISpec => {
  const defs = spec.components.schemas as Record<string, unknown>
  const { retryScheduleMs, timeoutMs, userAgent } = DEFAULT_WEBHOOK_CONFIG
  const retryAfterAnswer = "Overloaded, or down for a while: the attempt fails and is retried as any failure, but with a " +
    "`Retry-After` (delay-seconds or an HTTP-date) not before the time it asks, and not after the time the retry following " +
    `that one is due (the schedule: ${retryScheduleMs.map(seconds).join(", ")} after the first failure), so a receiver can ` +
    "make mzk wait but cannot stretch the schedule; the last retry keeps its time. A value that is neither form is ignored."
  const webhooks: Record<string, unknown> = {}
  for (const type of EVENT_TYPES) {
    const event = Schema.Struct({
      id: EventId.annotations({ description: "The event's id (`evt_…`), the same on every attempt: deduplicate on it" }),
      type: Schema.Literal(type),
      created_at: Timestamp,
      data: EVENT_DATA[type] as Schema.Schema<unknown, unknown>
    }).annotations({ identifier: eventSchemaName(type), description: `The body of a \`${type}\` delivery` })
    webhooks[type] = {
      post: {
        operationId: `webhooks.${type}`,
        summary: `${type} event`,
        description: recipients(type),
        parameters: [
          {
            name: SIGNATURE_HEADER,
            in: "header",
            required: true,
            description: SIGNATURE_DESCRIPTION,
            schema: { type: "string", pattern: "^t=\\d+(,v1=[0-9a-f]{64})+$" }
          },
          ...STANDARD_WEBHOOK_HEADERS,
          { name: "User-Agent", in: "header", required: true, schema: { type: "string", example: userAgent } }
        ],
        requestBody: {
          required: true,
          content: { "application/json": { schema: OpenApiJsonSchema.makeWithDefs(event, { defs, defsPath: "#/components/schemas/" }) } }
        },
        responses: {
          "2XX": { description: "Acknowledged: the delivery succeeded." },
          "410": {
            description: "Gone: the endpoint will never take deliveries again. The delivery fails and the webhook is disabled at " +
              "once (`active: false`, `disabled_reason: \"endpoint_gone\"`), its other pending deliveries cancelled; " +
              "`PATCH active: true` switches it on again."
          },
          "429": { description: retryAfterAnswer },
          "503": { description: retryAfterAnswer },
          default: {
            description: `Any other status (a redirect included), or no answer within ${seconds(timeoutMs)}, fails the attempt; ` +
              `it is retried ${retryScheduleMs.map(seconds).join(", ")} after the first failure. When the last retry fails ` +
              "the webhook is disabled (`disabled_reason: \"delivery_failures\"`) and its other pending deliveries cancelled. An " +
              "attempt asked for by hand (a test, a retry, a recovery) is made once: it is not retried and, but for a 410, never " +
              "disables the webhook."
          }
        }
      }
    }
  }
  return { ...spec, webhooks } as OpenApi.OpenAPISpec
}
