import type { HttpApi, HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import type { Principal } from "@mzk/core"
import type { Effect } from "effect"
import type { Authentication } from "../api/annotations.js"
import type { MzkApi } from "../api/index.js"

type Groups = typeof MzkApi extends HttpApi.HttpApi<string, infer G, infer _E, infer _R> ? G : never
type ApiErrors = typeof MzkApi extends HttpApi.HttpApi<string, infer _G, infer E, infer _R> ? E : never

export type GroupName = HttpApiGroup.HttpApiGroup.Name<Groups>
type EndpointsOf<Group extends GroupName> = HttpApiGroup.HttpApiGroup.EndpointsWithName<Groups, Group>

/** Who asks: the principal of the checked bearer token where the group takes one (`Authentication`). */
type PrincipalOf<Group extends GroupName> = [Extract<HttpApiGroup.HttpApiGroup.MiddlewareWithName<Groups, Group>, Authentication>] extends [never]
  ? undefined
  : Principal

/** What the dispatcher hands a handler: who asks and the decoded request. */
export interface HandlerRequest<Endpoint extends HttpApiEndpoint.HttpApiEndpoint.Any, Who = Principal> {
  readonly principal: Who
  readonly path: HttpApiEndpoint.HttpApiEndpoint.PathParsed<Endpoint>
  readonly payload: HttpApiEndpoint.HttpApiEndpoint.Payload<Endpoint>
  readonly urlParams: HttpApiEndpoint.HttpApiEndpoint.UrlParams<Endpoint>
}

/**
 * What a handler answers with: the endpoint's success value. A metered endpoint's rate-limit
 * windows are not part of it: the core records them for the request (`metered`), and `handle`
 * moves them onto the answer.
 */
export type HandlerAnswer<Endpoint extends HttpApiEndpoint.HttpApiEndpoint.Any> = HttpApiEndpoint.HttpApiEndpoint.Success<Endpoint>

export type Handler<Endpoint extends HttpApiEndpoint.HttpApiEndpoint.Any, GroupError, Who = Principal> = (
  request: HandlerRequest<Endpoint, Who>
) => Effect.Effect<HandlerAnswer<Endpoint>, HttpApiEndpoint.HttpApiEndpoint.Error<Endpoint> | GroupError | ApiErrors>

/** One handler per endpoint of the group: a missing one, or one of the wrong type, does not compile. */
export type GroupHandlers<Group extends GroupName> = {
  readonly [Name in HttpApiEndpoint.HttpApiEndpoint.Name<EndpointsOf<Group>>]: Handler<
    HttpApiEndpoint.HttpApiEndpoint.WithName<EndpointsOf<Group>, Name>,
    HttpApiGroup.HttpApiGroup.ErrorWithName<Groups, Group>,
    PrincipalOf<Group>
  >
}

/** A handler as the dispatcher holds it, its types checked where it was written. */
export type AnyHandler = (request: {
  readonly principal: Principal | undefined
  readonly path: unknown
  readonly payload: unknown
  readonly urlParams: unknown
}) => Effect.Effect<unknown, unknown>

/** The handlers of one group of an API, by endpoint name. */
export interface GroupImplementation {
  readonly group: string
  readonly handlers: Readonly<Record<string, AnyHandler>>
}

/** The implementation of one of MzkApi's groups: checked against its endpoints' types, served by the dispatcher. */
export const implement = <const Group extends GroupName>(group: Group, handlers: GroupHandlers<Group>): GroupImplementation => ({
  group,
  handlers: handlers as unknown as Readonly<Record<string, AnyHandler>>
})
