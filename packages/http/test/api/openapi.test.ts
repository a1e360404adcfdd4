import { HttpApi } from "@effect/platform"
import { EVENT_TYPES } from "@mzk/core"
import { MzkApi } from "@mzk/http"
import { Validator } from "@seriousme/openapi-schema-validator"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeHarness } from "../support.js"

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

  it("introduces the service by every proving system it proves and verifies", async () => {
    const { description } = (await h.call("GET", "/api/v1/openapi.json")).json.info
    for (const system of ["Groth16", "PLONK", "FFLONK", "UltraHonk"]) expect(description).toContain(system)
    expect(description).not.toMatch(/^Groth16 proofs as a service/)
  })

  it("documents every list's ?limit= as a page size, not as the string it is sent as", async () => {
    const doc = (await h.call("GET", "/api/v1/openapi.json")).json
    const limits = Object.entries(doc.paths as Record<string, Record<string, { parameters?: Array<{ name: string; in: string; description?: string; schema?: unknown }> }>>)
      .flatMap(([path, operations]) => Object.values(operations).flatMap((operation) =>
        (operation.parameters ?? []).filter((p) => p.in === "query" && p.name === "limit").map((p) => [path, p])))
    expect(limits.length).toBeGreaterThan(5)
    for (const [path, parameter] of limits) {
      expect([path, parameter]).toEqual([path, expect.objectContaining({
        description: "How many items a page holds (default 20)",
        schema: expect.objectContaining({ type: "integer", minimum: 1, maximum: 100 })
      })])
    }
  })

  it("POST /verifications names every proving system it takes, as the request's schema does", async () => {
    const doc = (await h.call("GET", "/api/v1/openapi.json")).json
    const { description } = doc.paths["/api/v1/verifications"].post
    for (const system of doc.components.schemas.ProvingSystem.enum as Array<string>) expect(description).toContain(`\`${system}\``)
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

  it("offers Idempotency-Key on every POST, and the replay headers on its success", async () => {
    const doc = (await h.call("GET", "/api/v1/openapi.json")).json
    for (const { method, path } of endpoints()) {
      const operation = doc.paths[path.replace(/:(\w+)/g, "{$1}")][method.toLowerCase()]
      const parameter = (operation.parameters ?? []).find((p: { name: string }) => p.name === "Idempotency-Key")
      if (method !== "POST") {
        expect(parameter, `${method} ${path}`).toBeUndefined()
        continue
      }
      expect(parameter, path).toMatchObject({ in: "header", required: false, schema: { type: "string", maxLength: 255 } })
      const success = Object.entries(operation.responses).find(([status]) => status.startsWith("2"))![1] as { headers: object }
      expect(Object.keys(success.headers), path).toEqual(expect.arrayContaining(["Idempotent-Replayed", "Original-Request"]))
      expect(Object.keys(operation.responses), path).toEqual(expect.arrayContaining(["409", "422"]))
    }
  })

  it("describes every event type in its webhooks section: the envelope with that type's data, signed with both schemes, and what answers do", async () => {
    const doc = (await h.call("GET", "/api/v1/openapi.json")).json
    expect(Object.keys(doc.webhooks).sort()).toEqual([...EVENT_TYPES].sort())
    const resolve = (schema: { $ref?: string }) => (schema.$ref === undefined ? schema : doc.components.schemas[schema.$ref.split("/").pop()!])
    for (const type of EVENT_TYPES) {
      const operation = doc.webhooks[type].post
      const event = resolve(operation.requestBody.content["application/json"].schema)
      expect(event.required, type).toEqual(["id", "type", "created_at", "data"])
      expect(event.properties.type, type).toEqual({ type: "string", enum: [type] })
      const data = resolve(event.properties.data)
      expect(data.type, type).toBe("object")
      expect(Object.keys(data.properties ?? {}).length, type).toBeGreaterThan(0)
      const signature = operation.parameters.find((p: { name: string }) => p.name === "Service-Signature")
      expect(signature, type).toMatchObject({ in: "header", required: true })
      expect(signature.description).toContain("HMAC-SHA256")
      expect(signature.description).toContain("<t>.<body>")
      expect(signature.description).toContain("v1=<new>,v1=<old>")
      const names = operation.parameters.map((p: { name: string }) => p.name)
      expect(names).toEqual(expect.arrayContaining(["webhook-id", "webhook-timestamp", "webhook-signature"]))
      const standard = operation.parameters.find((p: { name: string }) => p.name === "webhook-signature")
      expect(standard.description).toContain("<webhook-id>.<webhook-timestamp>.<body>")
      expect(Object.keys(operation.responses).sort()).toEqual(["2XX", "410", "429", "503", "default"])
      expect(operation.responses["410"].description).toContain("endpoint_gone")
      expect(operation.responses["503"].description).toContain("Retry-After")
    }
    const completed = resolve(resolve(doc.webhooks["proof.completed"].post.requestBody.content["application/json"].schema).properties.data)
    expect(completed.required).toEqual(expect.arrayContaining(["proof_id", "status"]))
  })
})
