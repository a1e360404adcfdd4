import { openApiDocument } from "@mzk/http"
import { request } from "node:http"
import { brotliDecompressSync, gunzipSync } from "node:zlib"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { chooseCoding, STATIC_CACHE_CONTROL } from "../../src/serve/static.js"
import { makeHarness } from "../support.js"

let h: Awaited<ReturnType<typeof makeHarness>>
beforeAll(async () => {
  h = await makeHarness()
})
afterAll(() => h.close())

interface Raw {
  readonly status: number
  readonly headers: Record<string, string | Array<string> | undefined>
  /** The bytes as sent, not decoded (fetch would undo the compression this test looks at). */
  readonly body: Buffer
}

const raw = (method: string, path: string, headers: Record<string, string> = {}) =>
  new Promise<Raw>((resolve, reject) => {
    const req = request(`${h.baseUrl}${path}`, { method, headers, agent: false }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (chunk: Buffer) => chunks.push(chunk))
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }))
      res.on("error", reject)
    })
    req.on("error", reject).end()
  })

describe("choosing a content coding from Accept-Encoding", () => {
  it.each([
    [undefined, "identity"],
    ["", "identity"],
    ["gzip", "gzip"],
    ["gzip, deflate, br", "br"],
    ["br;q=0.5, gzip", "gzip"],
    ["br;q=0, gzip;q=0", "identity"],
    ["deflate", "identity"],
    ["*", "br"],
    ["*;q=0.1, gzip;q=0.5", "gzip"],
    ["identity;q=0, gzip;q=0.2", "gzip"],
    ["GZIP; Q=1", "gzip"]
  ] as const)("%j → %s", (header, coding) => {
    expect(chooseCoding(header)).toBe(coding)
  })
})

describe.each([
  { path: "/docs", type: "text/html; charset=utf-8" },
  { path: "/api/v1/openapi.json", type: "application/json" }
])("$path", ({ path, type }) => {
  it("is sent compressed as the client accepts, each coding decoding to the same content", async () => {
    const identity = await raw("GET", path)
    expect(identity.status).toBe(200)
    expect(identity.headers["content-type"]).toBe(type)
    expect(identity.headers["content-encoding"]).toBeUndefined()
    const br = await raw("GET", path, { "accept-encoding": "gzip, deflate, br" })
    expect(br.headers["content-encoding"]).toBe("br")
    expect(brotliDecompressSync(br.body).equals(identity.body)).toBe(true)
    const gz = await raw("GET", path, { "accept-encoding": "gzip" })
    expect(gz.headers["content-encoding"]).toBe("gzip")
    expect(gunzipSync(gz.body).equals(identity.body)).toBe(true)
    expect(br.body.length).toBeLessThan(identity.body.length / 3)
    for (const reply of [identity, br, gz]) {
      expect(reply.headers["vary"]).toBe("Accept-Encoding")
      expect(reply.headers["cache-control"]).toBe(STATIC_CACHE_CONTROL)
      expect(Number(reply.headers["content-length"])).toBe(reply.body.length)
    }
    // One strong tag per representation (RFC 9110 §8.8.3).
    expect(new Set([identity, br, gz].map((r) => r.headers["etag"])).size).toBe(3)
    if (path === "/api/v1/openapi.json") expect(JSON.parse(identity.body.toString("utf8"))).toEqual(openApiDocument)
  })

  it("answers 304 without a body to a client that holds the current version of the coding it would get", async () => {
    const br = await raw("GET", path, { "accept-encoding": "br" })
    const etag = br.headers["etag"] as string
    const again = await raw("GET", path, { "accept-encoding": "br", "if-none-match": `"other", ${etag}` })
    expect(again.status).toBe(304)
    expect(again.body.length).toBe(0)
    expect(again.headers["etag"]).toBe(etag)
    expect(again.headers["cache-control"]).toBe(STATIC_CACHE_CONTROL)
    // A cache holding the gzip copy, asking for a Brotli client, gets the Brotli copy.
    const gzipTag = (await raw("GET", path, { "accept-encoding": "gzip" })).headers["etag"] as string
    const otherCoding = await raw("GET", path, { "accept-encoding": "br", "if-none-match": gzipTag })
    expect([otherCoding.status, otherCoding.headers["content-encoding"]]).toEqual([200, "br"])
    const stale = await raw("GET", path, { "accept-encoding": "br", "if-none-match": "\"an-older-version\"" })
    expect(stale.status).toBe(200)
    expect(stale.body.length).toBeGreaterThan(0)
  })

  it("answers HEAD with the GET's headers and no body", async () => {
    const get = await raw("GET", path, { "accept-encoding": "br" })
    const head = await raw("HEAD", path, { "accept-encoding": "br" })
    expect(head.status).toBe(200)
    expect(head.body.length).toBe(0)
    for (const name of ["content-encoding", "content-length", "etag", "vary", "cache-control", "content-type"]) {
      expect(head.headers[name], name).toBe(get.headers[name])
    }
  })
})

describe("/docs", () => {
  it("forbids the page every other origin (Content-Security-Policy)", async () => {
    const page = await raw("GET", "/docs")
    const policy = String(page.headers["content-security-policy"])
    expect(policy).toContain("default-src 'none'")
    expect(policy).toContain("connect-src 'self'")
    expect(policy).toContain("font-src 'self' data:")
    expect(policy).not.toMatch(/https?:|\*/)
  })

  it("asks Scalar for no default fonts, no telemetry, no toolbar (share, SDKs) and no client button", async () => {
    const html = (await raw("GET", "/docs")).body.toString("utf8")
    const configuration = /dataset\.configuration = JSON\.stringify\((\{.*?\})\)/.exec(html)
    expect(configuration).not.toBeNull()
    expect(JSON.parse(configuration![1]!)).toMatchObject({
      withDefaultFonts: false,
      telemetry: false,
      showToolbar: "never",
      hideClientButton: true
    })
  })
})

describe("who may read what, as the document says it", () => {
  it("the document and the docs page need no key; the circuit listings need circuits:read (they name the account's own circuits)", async () => {
    for (const path of ["/docs", "/api/v1/openapi.json"]) expect((await raw("GET", path)).status, path).toBe(200)
    const paths = openApiDocument.paths as Record<string, Record<string, { security?: unknown }>>
    expect(paths["/api/v1/circuits"]!["get"]!.security).toEqual([{ bearer: ["circuits:read"] }])
    expect(paths["/api/v1/circuits/{name}"]!["get"]!.security).toEqual([{ bearer: ["circuits:read"] }])
    const listing = await raw("GET", "/api/v1/circuits")
    expect(listing.status).toBe(401)
  })
})
