import { makeOperationsDispatcher, type MzkRequest, Operations, type OperationsShape } from "@mzk/http"
import { Effect, Option } from "effect"
import { describe, expect, it } from "vitest"

const request = (method: string, url: string, headers: Record<string, string> = {}): MzkRequest => ({
  method,
  url,
  headers,
  body: Effect.succeed(""),
  stream: () => Effect.void
})

const withMetrics: OperationsShape = {
  readiness: Effect.succeed({ database: { ok: false, message: "migration 12 is pending" } }),
  metrics: Option.some({ contentType: "text/plain; version=0.0.4", render: Effect.succeed("up 1\n"), authorize: (authorization) => authorization === "Bearer t0ken" }),
  accessLog: false
}

const serve = (message: MzkRequest) =>
  Effect.runPromise(Effect.flatMap(makeOperationsDispatcher, (dispatch) => dispatch(message)).pipe(Effect.provideService(Operations, withMetrics)))

const json = (body: unknown) => JSON.parse(String(body)) as { error: { code: string; message: string; request_id: string } }

describe("a worker's operational endpoints (makeOperationsDispatcher)", () => {
  it("answer the probes and the metrics, each with a Request-Id", async () => {
    const health = await serve(request("GET", "/healthz"))
    expect([health.status, JSON.parse(String(health.body))]).toEqual([200, { status: "ok" }])
    expect(health.headers["request-id"]).toMatch(/^req_/)
    const ready = await serve(request("GET", "/readyz?verbose=1"))
    expect(ready.status).toBe(503)
    expect(ready.headers["request-id"]).toMatch(/^req_/)
    const metrics = await serve(request("GET", "/metrics", { authorization: "Bearer t0ken" }))
    expect([metrics.status, metrics.body, metrics.headers["content-type"]]).toEqual([200, "up 1\n", "text/plain; version=0.0.4"])
  })

  it("answer errors in the API's envelope, its request id the response's", async () => {
    const refused = await serve(request("GET", "/metrics", { authorization: "Bearer wrong" }))
    expect([refused.status, json(refused.body).error.code]).toEqual([401, "invalid_api_key"])
    expect(json(refused.body).error.request_id).toBe(refused.headers["request-id"])
    for (const [method, path] of [["GET", "/api/v1/keys"], ["POST", "/healthz"]] as const) {
      const missing = await serve(request(method, path))
      expect([missing.status, json(missing.body).error.code]).toEqual([404, "not_found"])
      expect(json(missing.body).error.message).toBe(`No route ${method} ${path}: this process serves only /healthz, /readyz and /metrics`)
      expect(json(missing.body).error.request_id).toBe(missing.headers["request-id"])
    }
  })
})
