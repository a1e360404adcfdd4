import type { MzkRequest } from "../../wire/message.js"
import { MULTIPART_BODY, precheck } from "../../wire/precheck.js"
import type { RequestRecord, Stage } from "../pipeline.js"
import type { RouteMatch } from "../router.js"

/** Path and query of a request target; an absolute-form target (`http://host/path`, as a proxy is sent) gives its path. */
const requestTarget = (url: string) => {
  if (url.startsWith("/")) return url
  try {
    const parsed = new URL(url)
    return parsed.pathname + parsed.search
  } catch {
    return url
  }
}

const NOT_FOUND = { _tag: "NotFound" } as const
const NONE: Readonly<Record<string, string>> = {}

export interface LocateOptions<Route> {
  readonly route: (method: string, path: string) => RouteMatch<Route>
  /** The 413/415 checks of the request's head, before routing (an API's; not the probes'). */
  readonly precheck: boolean
  /** What a matched route refuses before it runs, given whether the body is multipart (the upload checks). */
  readonly refuse?: (route: Route, multipart: boolean, request: MzkRequest) => unknown
}

/**
 * Where the request goes: the target's path and query, the route and its parameters, or the
 * refusal decided from the request's head alone. It answers nothing: `refuse` does, inside the
 * stages that count, stamp and encode every answer.
 */
export const locate = <Route extends { readonly path: string }>(options: LocateOptions<Route>): Stage<RequestRecord<Route>> => (record, next) => {
  const { request } = record
  const early = options.precheck ? precheck(request) : undefined
  if (early !== undefined && early !== MULTIPART_BODY) return next({ ...record, refused: early })
  const target = requestTarget(request.url)
  const queryAt = target.indexOf("?")
  const pathname = queryAt === -1 ? target : target.slice(0, queryAt)
  const search = queryAt === -1 ? "" : target.slice(queryAt + 1)
  const match = options.route(request.method, pathname)
  if (match._tag !== "Found") return next({ ...record, pathname, search, match })
  const refused = options.refuse?.(match.route, early === MULTIPART_BODY, request)
  return next({ ...record, pathname, search, match, params: match.params, route: match.route.path, refused })
}

/** A request as it enters the pipeline: nothing known of it but its id. */
export const openRecord = <Route>(request: MzkRequest, requestId: string): RequestRecord<Route> => ({
  request,
  requestId,
  pathname: "",
  search: "",
  match: NOT_FOUND,
  refused: undefined,
  route: "unmatched",
  params: NONE,
  query: NONE,
  principal: undefined,
  idempotencyKey: undefined,
  fingerprintBody: "",
  path: undefined,
  payload: undefined,
  urlParams: undefined
})
