import { HttpApiBuilder, type HttpApiError, HttpApiScalar, HttpApp, HttpMiddleware, HttpRouter, HttpServer } from "@effect/platform"
import { type ApiKeys, boundedMessage, type CircuitCatalog, InvalidRequest, type Proofs, type SessionAuthenticator, type Webhooks } from "@mzk/core"
import { Effect, Layer } from "effect"
import { MzkApi } from "./api.js"
import { AuthenticationLive } from "./auth.js"
import { KeysLive } from "./handlers/keys.js"
import { CircuitsLive, ProofsLive } from "./handlers/proofs.js"
import { WebhooksLive } from "./handlers/webhooks.js"
import { makeRouteTable } from "./routes.js"
import { requestPipeline } from "./requestPipeline.js"

export const OPENAPI_PATH = "/api/v1/openapi.json"
export const DOCS_PATH = "/docs"

/** Schema failures of path, query and body become `invalid_request` with one detail per issue. */
const InvalidRequestFromDecodeErrors = HttpApiBuilder.middleware(MzkApi, (app) =>
  (app as HttpApp.Default<HttpApiError.HttpApiDecodeError>).pipe(
    Effect.catchTag("HttpApiDecodeError", (error) => {
      const details = error.issues.map((issue) => ({ path: issue.path.map(String).join("."), message: boundedMessage(issue.message) }))
      const summary = details.map((d) => (d.path === "" ? d.message : `${d.path}: ${d.message}`)).join("; ")
      return Effect.fail(new InvalidRequest({ message: `Invalid request: ${summary}`, details }))
    })
  ))

const ApiLive = HttpApiBuilder.api(MzkApi).pipe(
  Layer.provide([KeysLive, WebhooksLive, ProofsLive, CircuitsLive]),
  Layer.provide(AuthenticationLive)
)

/** The whole HTTP surface as a layer: the API, the OpenAPI document and the docs page. */
export const MzkHttpLive = Layer.mergeAll(
  ApiLive,
  InvalidRequestFromDecodeErrors,
  HttpApiBuilder.middlewareOpenApi({ path: OPENAPI_PATH }),
  HttpApiScalar.layer({ path: DOCS_PATH })
).pipe(Layer.provideMerge(ApiLive))

export const routeTable = makeRouteTable([{ method: "GET", path: OPENAPI_PATH }, { method: "GET", path: DOCS_PATH }])

/**
 * The API wrapped in the request pipeline (Request-Id, 413/415, the error envelope). It wraps the
 * app itself, not the server's middleware slot: there the response has already been sent and
 * router errors have already become bodiless responses.
 */
export const mzkHttpApp = HttpApiBuilder.httpApp.pipe(
  // The router's default refuses path parameters over 100 characters as if the route did not
  // exist; ids that long should reach their handler and be a plain 404 of their kind.
  HttpRouter.withRouterConfig({ maxParamLength: 4096 }),
  Effect.map(requestPipeline(routeTable))
)

const RouterLayers = Layer.mergeAll(HttpApiBuilder.Router.Live, HttpApiBuilder.Middleware.layer)

/**
 * The platform opens a tracing span per request. mzk exports no traces and an embedder cannot add a
 * tracer to mzk's runtime, so the spans are never seen, yet they cost about a tenth of a key
 * listing's CPU time (measured with `bench/http.ts`). Every way of serving mzk turns them off: this
 * layer for the embedding handlers' runtimes, `withTracerDisabledWhen` around `serveMzk`.
 */
export const NoRequestSpans = Layer.locallyScoped(HttpMiddleware.currentTracerDisabledWhen, () => true)

/** Everything `mzkHttpApp` needs besides the core services: the API and its router. */
export const MzkHttpAppLive = Layer.mergeAll(MzkHttpLive, RouterLayers)

/** Serve on an `HttpServer` (Node, Bun, or a test server); needs `MzkHttpLive` and the core. */
export const serveMzk = mzkHttpApp.pipe(
  // The router's own services are provided per request by the server, as HttpApiBuilder.serve does.
  Effect.map((app) => HttpServer.serve(app as HttpApp.Default)),
  Layer.unwrapEffect,
  HttpMiddleware.withTracerDisabledWhen(() => true),
  Layer.provide(RouterLayers)
)

/**
 * A fetch-style handler, `(Request) => Promise<Response>`, for embedding in any framework that
 * speaks web requests. `core` supplies the core services (see `@mzk/server` for the default wiring).
 */
export const makeWebHandler = <E>(core: Layer.Layer<ApiKeys | Webhooks | Proofs | CircuitCatalog | SessionAuthenticator, E>) => {
  const web = HttpApp.toWebHandlerLayerWith(
    Layer.mergeAll(MzkHttpLive, HttpServer.layerContext, RouterLayers, NoRequestSpans).pipe(Layer.provide(core)),
    { toHandler: (runtime) => Effect.provide(mzkHttpApp, runtime) }
  )
  // A web Request need not declare its length, and reading its body has no cap of its own: buffer
  // it here so the pipeline's 1 MiB check sees a Content-Length, as it does on a Node server.
  const handler = async (request: Request): Promise<Response> => {
    if (request.body === null || request.headers.has("content-length")) return web.handler(request)
    const body = await request.arrayBuffer()
    const headers = new Headers(request.headers)
    headers.set("content-length", String(body.byteLength))
    return web.handler(new Request(request.url, { method: request.method, headers, body, signal: request.signal }))
  }
  return { handler, dispose: web.dispose }
}
