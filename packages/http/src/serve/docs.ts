import { HttpApi, HttpApiBuilder, HttpApiScalar, HttpRouter, HttpServerRequest, HttpServerResponse, OpenApi } from "@effect/platform"
import { Context, Effect, Layer } from "effect"
import { MzkApi } from "../api/index.js"
import type { MzkResponse } from "../wire/message.js"

export const OPENAPI_PATH = "/api/v1/openapi.json"
export const DOCS_PATH = "/docs"

/** The OpenAPI 3.1 document of MzkApi, served at `OPENAPI_PATH`. */
export const openApiDocument = OpenApi.fromApi(MzkApi)

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
    HttpApiScalar.layer({ path: DOCS_PATH }).pipe(
      Layer.provideMerge(HttpApiBuilder.Router.Live),
      Layer.provide(Layer.succeed(HttpApi.Api, { api: api as unknown as Context.Tag.Service<HttpApi.Api>["api"], context: Context.empty() }))
    )
  ),
  Effect.orDie
  // HttpApiBuilder's Router declares the services a router may use for files (platform, ETags, file
  // system); the docs route only returns its HTML and never asks for them.
) as Effect.Effect<MzkResponse>
