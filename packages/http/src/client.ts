import { HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { MzkApi } from "./api/index.js"

/**
 * A typed client for TypeScript users: every endpoint as a method, responses decoded, errors
 * decoded back into the core's tagged errors (`KeyLimitReached`, `InvalidApiKey`, …).
 * Needs an `HttpClient` (e.g. `FetchHttpClient.layer` or `NodeHttpClient.layerUndici`).
 */
export const makeMzkClient = (options: { readonly baseUrl: string; readonly apiKey: string }) =>
  HttpApiClient.make(MzkApi, {
    baseUrl: options.baseUrl,
    transformClient: HttpClient.mapRequest(HttpClientRequest.bearerToken(options.apiKey))
  })
