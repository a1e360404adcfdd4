import type { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Chunk, Effect } from "effect"
import { MzkApi } from "../api.js"

type MzkGroups = typeof MzkApi extends HttpApi.HttpApi<string, infer Groups, infer _E, infer _R> ? Groups : never
type MzkError = typeof MzkApi extends HttpApi.HttpApi<string, infer _G, infer E, infer _R> ? E : never

/** One endpoint's implementation: what the dispatcher calls once the request is authenticated and decoded. */
export interface HandlerItem {
  readonly group: string
  readonly endpoint: HttpApiEndpoint.HttpApiEndpoint.AnyWithProps
  readonly handler: (request: { readonly path?: unknown; readonly urlParams?: unknown; readonly payload?: unknown }) => Effect.Effect<unknown, unknown, unknown>
}

/** Collects `.handle(name, handler)` calls in the shape HttpApiBuilder's `Handlers` has, so its types check them. */
const collector = (group: HttpApiGroup.HttpApiGroup.AnyWithProps, items: Chunk.Chunk<HandlerItem>) => ({
  group,
  handlers: items,
  handle(name: string, handler: HandlerItem["handler"]) {
    const endpoint = group.endpoints[name]
    if (endpoint === undefined) throw new Error(`No endpoint ${group.identifier}.${name} in MzkApi`)
    return collector(group, Chunk.append(items, { group: group.identifier, endpoint, handler }))
  }
})

/**
 * The implementation of one of MzkApi's groups, written against HttpApiBuilder's `Handlers`
 * interface (so a missing endpoint, a wrong payload type or a wrong success type fails to compile)
 * but served by mzk's own dispatcher rather than HttpApiBuilder's router. Yields the handlers once
 * the services `build` needs are provided.
 */
export const implement = <const Name extends HttpApiGroup.HttpApiGroup.Name<MzkGroups>, Return>(
  name: Name,
  build: (
    handlers: HttpApiBuilder.Handlers.FromGroup<MzkError, never, HttpApiGroup.HttpApiGroup.WithName<MzkGroups, Name>>
  ) => HttpApiBuilder.Handlers.ValidateReturn<Return>
): Effect.Effect<ReadonlyArray<HandlerItem>, never, HttpApiBuilder.Handlers.Context<Return>> =>
  Effect.suspend(() => {
    const group = (MzkApi.groups as unknown as Record<string, HttpApiGroup.HttpApiGroup.AnyWithProps>)[name]!
    const built = build(collector(group, Chunk.empty()) as never) as unknown
    const done = Effect.isEffect(built) ? built : Effect.succeed(built)
    return Effect.map(done as Effect.Effect<{ readonly handlers: Chunk.Chunk<HandlerItem> }>, (h) => Chunk.toReadonlyArray(h.handlers))
  }) as Effect.Effect<ReadonlyArray<HandlerItem>, never, HttpApiBuilder.Handlers.Context<Return>>
