/**
 * Method + path → route, for the dispatcher: the API's endpoints and the two documentation pages.
 * A path may end in one extra `/`. Path parameters match one non-empty segment and arrive
 * percent-decoded. HEAD finds the GET route of its path (RFC 9110 §9.3.2: GET without the body; the
 * transports send the head only). A path some route has, asked with another method, reports the
 * methods it has (HEAD beside GET), for the 405 and its `Allow` header.
 */
export interface RoutePattern {
  readonly method: string
  /** `/api/v1/proofs/:id/verify`: `:name` segments are parameters. */
  readonly path: string
}

export type RouteMatch<T> =
  | { readonly _tag: "Found"; readonly route: T; readonly params: Readonly<Record<string, string>> }
  | { readonly _tag: "MethodNotAllowed"; readonly allowed: ReadonlyArray<string> }
  | { readonly _tag: "NotFound" }

interface Compiled<T> {
  readonly method: string
  readonly segments: ReadonlyArray<{ readonly literal: string } | { readonly param: string }>
  readonly route: T
}

const decodeSegment = (segment: string) => {
  try {
    return decodeURIComponent(segment)
  } catch {
    return segment
  }
}

export const makeRouter = <T extends RoutePattern>(routes: ReadonlyArray<T>) => {
  const compiled: Array<Compiled<T>> = routes.map((route) => ({
    method: route.method,
    route,
    segments: route.path.split("/").slice(1).map((s) => (s.startsWith(":") ? { param: s.slice(1) } : { literal: s }))
  }))

  const matchPath = (route: Compiled<T>, segments: ReadonlyArray<string>) => {
    if (route.segments.length !== segments.length) return undefined
    const params: Record<string, string> = {}
    for (let i = 0; i < segments.length; i++) {
      const pattern = route.segments[i]!
      const segment = segments[i]!
      if ("literal" in pattern) {
        if (pattern.literal !== segment) return undefined
      } else {
        if (segment === "") return undefined
        params[pattern.param] = decodeSegment(segment)
      }
    }
    return params
  }

  return (requested: string, pathname: string): RouteMatch<T> => {
    const method = requested === "HEAD" ? "GET" : requested
    const trimmed = pathname.length > 1 && pathname.endsWith("/") ? pathname.slice(0, -1) : pathname
    const segments = trimmed.split("/").slice(1)
    let methods: Array<string> | undefined
    for (const route of compiled) {
      const params = matchPath(route, segments)
      if (params === undefined) continue
      if (route.method === method) return { _tag: "Found", route: route.route, params }
      ;(methods ??= []).push(route.method)
    }
    if (methods === undefined) return { _tag: "NotFound" }
    const allowed = [...new Set(methods.flatMap((m) => (m === "GET" ? ["GET", "HEAD"] : [m])))]
    return { _tag: "MethodNotAllowed", allowed }
  }
}
