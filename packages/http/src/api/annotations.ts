import { type HttpApiEndpoint, HttpApiMiddleware, HttpApiSecurity } from "@effect/platform"
import type { HttpMethod } from "@effect/platform/HttpMethod"
import type { IdempotencyKeyInUse, IdempotencyKeyReused, InsufficientScope, RateLimitExceeded, Scope } from "@mzk/core"
import { Context, Schema } from "effect"
import {
  IdempotencyKeyInUseWire,
  IdempotencyKeyReusedWire,
  InsufficientScopeWire,
  InvalidApiKeyWire,
  RateLimitExceededWire,
  StorageErrorWire
} from "./errors.js"

/**
 * `Authorization: Bearer <token>`: an API key, or a session token of the embedding application.
 * The dispatcher checks it before anything else an endpoint does; 401 `invalid_api_key` otherwise.
 */
export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("@mzk/http/Authentication", {
  failure: Schema.Union(InvalidApiKeyWire, StorageErrorWire),
  security: { bearer: HttpApiSecurity.bearer }
}) {}

/** The scope a principal must hold for an endpoint; the dispatcher answers 403 `insufficient_scope` without it. */
export class RequiredScope extends Context.Tag("@mzk/http/RequiredScope")<RequiredScope, Scope>() {}

/**
 * The endpoint is charged against the proof rate limits: the core records the windows it charged
 * for the request (`metered` in core), and the dispatcher answers with the RateLimit fields, on a
 * 429 also `Retry-After`.
 */
export class MeteredEndpoint extends Context.Tag("@mzk/http/MeteredEndpoint")<MeteredEndpoint, boolean>() {}

/** The endpoint needs `scope`: annotated for the dispatcher and the OpenAPI document, and its 403 declared. */
export const requires = (scope: Scope) =>
<Name extends string, Method extends HttpMethod, Path, UrlParams, Payload, Headers, Success, Error, R, RE>(
  endpoint: HttpApiEndpoint.HttpApiEndpoint<Name, Method, Path, UrlParams, Payload, Headers, Success, Error, R, RE>
): HttpApiEndpoint.HttpApiEndpoint<Name, Method, Path, UrlParams, Payload, Headers, Success, Error | InsufficientScope, R, RE> =>
  endpoint.addError(InsufficientScopeWire).annotate(RequiredScope, scope)

/**
 * The endpoint is metered: annotated, and its 429 declared (the compiler refuses one without the
 * other).
 */
export const metered = <Name extends string, Method extends HttpMethod, Path, UrlParams, Payload, Headers, Success, Error, R, RE>(
  endpoint: HttpApiEndpoint.HttpApiEndpoint<Name, Method, Path, UrlParams, Payload, Headers, Success, Error, R, RE>
): HttpApiEndpoint.HttpApiEndpoint<Name, Method, Path, UrlParams, Payload, Headers, Success, Error | RateLimitExceeded, R, RE> =>
  endpoint.addError(RateLimitExceededWire).annotate(MeteredEndpoint, true)

/**
 * The endpoint takes an `Idempotency-Key` (every POST does, which the dispatcher checks at start):
 * annotated for the dispatcher and the OpenAPI document, and its 409 and 422 declared.
 */
export class IdempotentEndpoint extends Context.Tag("@mzk/http/IdempotentEndpoint")<IdempotentEndpoint, boolean>() {}

export const idempotent = <Name extends string, Method extends HttpMethod, Path, UrlParams, Payload, Headers, Success, Error, R, RE>(
  endpoint: HttpApiEndpoint.HttpApiEndpoint<Name, Method, Path, UrlParams, Payload, Headers, Success, Error, R, RE>
): HttpApiEndpoint.HttpApiEndpoint<Name, Method, Path, UrlParams, Payload, Headers, Success, Error | IdempotencyKeyReused | IdempotencyKeyInUse, R, RE> =>
  endpoint.addError(IdempotencyKeyReusedWire).addError(IdempotencyKeyInUseWire).annotate(IdempotentEndpoint, true)

/**
 * Fields of an idempotent endpoint's success body that are not kept for replays (null in them): a
 * secret shown once that mzk stores nowhere else, such as a raw API key.
 */
export class ReplayWithout extends Context.Tag("@mzk/http/ReplayWithout")<ReplayWithout, ReadonlyArray<string>>() {}

/**
 * Bracketed query parameters an endpoint takes besides its declared ones: `metadata` admits
 * `metadata[<key>]=…`. Every other parameter an endpoint's query schema does not name is a 400
 * naming it.
 */
export class QueryPrefixes extends Context.Tag("@mzk/http/QueryPrefixes")<QueryPrefixes, ReadonlyArray<string>>() {}
