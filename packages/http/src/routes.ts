import { HttpApi } from "@effect/platform"
import { MzkApi } from "./api.js"

/** Every (method, path pattern) of the API, to tell a 405 (known path, other method) from a 404. */
export interface RouteTable {
  /** The methods served at this path; empty when no route matches it. */
  readonly allowed: (path: string) => ReadonlyArray<string>
}

export const makeRouteTable = (extra: ReadonlyArray<{ method: string; path: string }> = []): RouteTable => {
  const routes: Array<{ method: string; pattern: RegExp }> = []
  const add = (method: string, path: string) =>
    routes.push({ method, pattern: new RegExp(`^${path.replace(/:[A-Za-z_]+/g, "[^/]+")}/?$`) })
  HttpApi.reflect(MzkApi, {
    onGroup: () => undefined,
    onEndpoint: ({ endpoint }) => add(endpoint.method, endpoint.path)
  })
  for (const route of extra) add(route.method, route.path)
  return {
    allowed: (path) => [...new Set(routes.filter((r) => r.pattern.test(path)).map((r) => r.method))]
  }
}
