import { HttpApi } from "@effect/platform"
import { MzkApi } from "@mzk/http"
import { Validator } from "@seriousme/openapi-schema-validator"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeHarness } from "./support.js"

let h: Awaited<ReturnType<typeof makeHarness>>
beforeAll(async () => {
  h = await makeHarness()
})
afterAll(() => h.close())

const endpoints = () => {
  const all: Array<{ method: string; path: string }> = []
  HttpApi.reflect(MzkApi, { onGroup: () => undefined, onEndpoint: ({ endpoint }) => all.push({ method: endpoint.method, path: endpoint.path }) })
  return all
}

describe("the OpenAPI document", () => {
  it("is served at /api/v1/openapi.json without a key and validates as OpenAPI 3.1", async () => {
    const reply = await h.call("GET", "/api/v1/openapi.json")
    expect(reply.status).toBe(200)
    expect(reply.json.openapi).toBe("3.1.0")
    const validator = new Validator()
    const result = await validator.validate(reply.json)
    expect(result.errors ?? []).toEqual([])
    expect(result.valid).toBe(true)
    expect(validator.version).toBe("3.1")
  })

  it("lists every endpoint of the API, with the bearer scheme and the error envelope", async () => {
    const doc = (await h.call("GET", "/api/v1/openapi.json")).json
    const listed = Object.entries(doc.paths as Record<string, Record<string, unknown>>)
      .flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ":$1")}`))
      .sort()
    expect(listed).toEqual(endpoints().map((e) => `${e.method} ${e.path}`).sort())
    expect(listed.length).toBeGreaterThanOrEqual(3)
    expect(JSON.stringify(doc.components.securitySchemes)).toContain("bearer")
    const createKey = doc.paths["/api/v1/keys"].post
    expect(Object.keys(createKey.responses)).toEqual(expect.arrayContaining(["201", "400", "401", "403", "409", "413", "415"]))
  })
})
