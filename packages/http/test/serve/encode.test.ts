import type { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { HttpApiSchema } from "@effect/platform"
import { ApiKeyList, MzkApi } from "@mzk/http"
import { Arbitrary, Schema } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { isDownloadAst } from "../../src/api/download.js"
import { makeResponseBody } from "../../src/serve/encode.js"

const endpoints = Object.values(MzkApi.groups as unknown as Record<string, HttpApiGroup.HttpApiGroup.AnyWithProps>).flatMap((group) =>
  Object.values(group.endpoints as Record<string, HttpApiEndpoint.HttpApiEndpoint.AnyWithProps>).map((endpoint) => ({
    name: `${group.identifier}.${endpoint.name}`,
    schema: endpoint.successSchema as Schema.Schema<unknown, unknown>
  }))
)
  // A download answers with a file's bytes (serve/download.ts), not a JSON body.
  .filter(({ schema }) => !HttpApiSchema.isVoid(schema.ast) && !isDownloadAst(schema.ast))

/** Adds fields no schema declares to every object inside `value`, as a storage record with a hash or secret carries. */
const withExtras = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(withExtras)
    : typeof value === "object" && value !== null
    ? { ...Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withExtras(v)])), hash: "a1b2", secret: "whsec_x" }
    : value

describe("success bodies", () => {
  it("cover the success schema of every endpoint with a body", () => {
    expect(endpoints.length).toBeGreaterThanOrEqual(14)
  })

  for (const { name, schema } of endpoints) {
    it(`${name}: the body is the JSON of what Schema encodes, also from values with undeclared fields`, () => {
      const body = makeResponseBody(schema)
      const encodeSync = Schema.encodeSync(schema)
      const encode = (value: unknown) => JSON.parse(JSON.stringify(encodeSync(value)))
      fc.assert(
        fc.property(Arbitrary.make(schema), (value) => {
          expect(JSON.parse(body(value))).toEqual(encode(value))
          expect(JSON.parse(body(withExtras(value)))).toEqual(encode(withExtras(value)))
        }),
        { numRuns: 40 }
      )
    })
  }

  it("a key listing built from stored records carries no hash", () => {
    const stored = {
      id: "key_01m82x6s71exxvbjtv3qjdj95w",
      account_id: "acct_01m82x6s70mrjn5z51j2523cbg",
      name: "ci",
      description: null,
      prefix: "mzk_IJlJDT",
      scopes: ["keys:read"],
      hash: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
      created_at: "2026-11-23T00:34:29.730Z",
      last_used_at: null,
      revoked_at: null
    }
    const body = makeResponseBody(ApiKeyList)({ keys: [stored], total: 1, limit: 10 })
    expect(body).not.toContain("9f86d081")
    expect(JSON.parse(body).keys[0]).toEqual({
      id: stored.id,
      name: "ci",
      description: null,
      prefix: "mzk_IJlJDT",
      scopes: ["keys:read"],
      created_at: stored.created_at,
      last_used_at: null
    })
  })
})
