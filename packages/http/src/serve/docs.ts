import { HttpApi, HttpApiBuilder, HttpApiScalar, HttpRouter, HttpServerRequest, HttpServerResponse, OpenApi } from "@effect/platform"
import { Context, Effect, Layer } from "effect"
import { MzkApi } from "../api/index.js"
import { JSON_HEADERS, type MzkRequest, type MzkResponse } from "../wire/message.js"
import { staticAsset } from "./static.js"

export const OPENAPI_PATH = "/api/v1/openapi.json"
export const DOCS_PATH = "/docs"

/** The OpenAPI 3.1 document of MzkApi, served at `OPENAPI_PATH`. */
export const openApiDocument = OpenApi.fromApi(MzkApi)

/**
 * Scalar's settings for a page that talks to nobody but this server. Left alone, Scalar loads its
 * fonts from fonts.scalar.com, reports API-client use to api.scalar.com (`telemetry`), and, on a
 * localhost URL, shows a toolbar whose buttons upload the whole OpenAPI document to Scalar's
 * registry (a "share" link) and offer SDK generation there. The "Open API Client" button opens
 * the standalone client, whose settings offer Scalar's request proxy; the per-operation "Test
 * Request" stays: it sends the request to this server, from the reader's browser.
 * Of these the platform's `ScalarConfig` type knows only `withDefaultFonts`; it hands the whole
 * object to Scalar, which reads the others (Scalar 1.39, the version the platform inlines).
 */
export const SCALAR_CONFIG = {
  // The API's one scheme chosen, so "Test Request" asks for the key rather than saying "No authentication selected".
  authentication: { preferredSecurityScheme: "bearer" },
  withDefaultFonts: false,
  hideClientButton: true,
  telemetry: false,
  showToolbar: "never"
} as const

/**
 * The browser enforces what `SCALAR_CONFIG` asks: anything the page would fetch, connect to or
 * load from another origin is refused, whatever a later Scalar adds. Scripts and styles are
 * inline (Scalar injects its own `<style>` elements); fonts and images come as `data:` URLs.
 */
export const DOCS_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  // Scalar compiles a WebAssembly module (no eval of JavaScript).
  "script-src 'unsafe-inline' 'wasm-unsafe-eval'",
  "style-src 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'"
].join("; ")

/**
 * The interactive docs page of an API (Scalar, its script inline, so it works offline), rendered
 * once by the platform's own HttpApiScalar: that module has no function that returns the page, only a route.
 */
export const docsPage = (api: HttpApi.HttpApi.Any) => Effect.gen(function*() {
  const app = yield* Effect.flatMap(HttpApiBuilder.Router.router, HttpRouter.toHttpApp)
  const request = HttpServerRequest.fromWeb(new Request(`http://mzk.invalid${DOCS_PATH}`))
  const response = yield* Effect.provideService(app, HttpServerRequest.HttpServerRequest, request)
  const web = HttpServerResponse.toWeb(response)
  const page: MzkResponse = { status: web.status, headers: Object.fromEntries(web.headers), body: yield* Effect.promise(() => web.text()) }
  return page
}).pipe(
  Effect.scoped,
  Effect.provide(
    HttpApiScalar.layer({ path: DOCS_PATH, scalar: SCALAR_CONFIG as HttpApiScalar.ScalarConfig }).pipe(
      Layer.provideMerge(HttpApiBuilder.Router.Live),
      Layer.provide(Layer.succeed(HttpApi.Api, { api: api as unknown as Context.Tag.Service<HttpApi.Api>["api"], context: Context.empty() }))
    )
  ),
  Effect.orDie
  // HttpApiBuilder's Router declares the services a router may use for files (platform, ETags, file
  // system); the docs route only returns its HTML and never asks for them.
) as Effect.Effect<MzkResponse>

/** A route the dispatcher serves beside the API from a response that never changes. */
export interface DocumentationRoute {
  readonly method: "GET"
  readonly path: string
  readonly respond: (request: MzkRequest) => Effect.Effect<MzkResponse>
}

/**
 * The OpenAPI document and the docs page of `api`, compressed and cached (see `staticAsset`). The
 * docs page is built and compressed on its first request, not when the server starts: most
 * servers (and tests) never serve it.
 */
export const documentationRoutes = (api: HttpApi.HttpApi.Any): Effect.Effect<ReadonlyArray<DocumentationRoute>> =>
  Effect.gen(function*() {
    // The document of the API served (the platform keeps one per API: for MzkApi, `openApiDocument`).
    const openApi = JSON.stringify(OpenApi.fromApi(api as never))
    const document = yield* Effect.cached(staticAsset(Effect.succeed(openApi), JSON_HEADERS))
    const page = yield* Effect.cached(staticAsset(
      Effect.map(docsPage(api), (rendered) => rendered.body as string),
      { "content-type": "text/html; charset=utf-8", "content-security-policy": DOCS_CONTENT_SECURITY_POLICY }
    ))
    return [
      { method: "GET", path: OPENAPI_PATH, respond: (request) => Effect.map(document, (answer) => answer(request)) },
      { method: "GET", path: DOCS_PATH, respond: (request) => Effect.map(page, (answer) => answer(request)) }
    ]
  })
