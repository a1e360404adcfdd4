import { makeRouter, type RouteMatch } from "@mzk/http"
import { describe, expect, it } from "vitest"

/** A small route table in the shape of MzkApi's: literals, parameters, a parameter then a literal. */
const routes = [
  { method: "GET", path: "/api/v1/keys" },
  { method: "POST", path: "/api/v1/keys" },
  { method: "DELETE", path: "/api/v1/keys/:id" },
  { method: "GET", path: "/api/v1/proofs/:id" },
  { method: "GET", path: "/api/v1/proofs/:id/verify" },
  { method: "POST", path: "/api/v1/proofs/batch" },
  { method: "GET", path: "/docs" }
] as const

const route = makeRouter(routes)

const describeMatch = (match: RouteMatch<(typeof routes)[number]>) =>
  match._tag === "Found"
    ? { found: `${match.route.method} ${match.route.path}`, params: match.params }
    : match._tag === "MethodNotAllowed"
    ? { allowed: match.allowed }
    : "not found"

/** Each row: method, request path, what the router answers. One table, run against the router as it is. */
const cases: ReadonlyArray<readonly [string, string, ReturnType<typeof describeMatch>]> = [
  // literals
  ["GET", "/api/v1/keys", { found: "GET /api/v1/keys", params: {} }],
  ["POST", "/api/v1/keys", { found: "POST /api/v1/keys", params: {} }],
  ["GET", "/docs", { found: "GET /docs", params: {} }],
  // one trailing slash is the same path; two are not
  ["GET", "/api/v1/keys/", { found: "GET /api/v1/keys", params: {} }],
  ["GET", "/api/v1/keys//", "not found"],
  ["GET", "/docs/", { found: "GET /docs", params: {} }],
  // parameters match one segment, percent-decoded
  ["DELETE", "/api/v1/keys/key_123", { found: "DELETE /api/v1/keys/:id", params: { id: "key_123" } }],
  ["DELETE", "/api/v1/keys/a%20b", { found: "DELETE /api/v1/keys/:id", params: { id: "a b" } }],
  ["DELETE", "/api/v1/keys/a%2Fb", { found: "DELETE /api/v1/keys/:id", params: { id: "a/b" } }],
  ["DELETE", "/api/v1/keys/%E2%9C%93", { found: "DELETE /api/v1/keys/:id", params: { id: "✓" } }],
  // a malformed escape is kept as sent rather than refused
  ["DELETE", "/api/v1/keys/%zz", { found: "DELETE /api/v1/keys/:id", params: { id: "%zz" } }],
  ["GET", "/api/v1/proofs/p1/verify", { found: "GET /api/v1/proofs/:id/verify", params: { id: "p1" } }],
  ["GET", "/api/v1/proofs/p1/verify/", { found: "GET /api/v1/proofs/:id/verify", params: { id: "p1" } }],
  // a literal segment wins over nothing: /proofs/batch is POST only, so GET reads it as an id
  ["GET", "/api/v1/proofs/batch", { found: "GET /api/v1/proofs/:id", params: { id: "batch" } }],
  ["POST", "/api/v1/proofs/batch", { found: "POST /api/v1/proofs/batch", params: {} }],
  // empty segments never fill a parameter
  ["DELETE", "/api/v1/keys/", { allowed: ["GET", "HEAD", "POST"] }],
  ["GET", "/api/v1/proofs//verify", "not found"],
  ["GET", "/api/v1//keys", "not found"],
  // a known path with another method: 405 with every method the path has, in table order, HEAD beside GET
  ["PUT", "/api/v1/keys", { allowed: ["GET", "HEAD", "POST"] }],
  ["GET", "/api/v1/keys/key_1", { allowed: ["DELETE"] }],
  ["POST", "/api/v1/proofs/p1", { allowed: ["GET", "HEAD"] }],
  ["DELETE", "/api/v1/proofs/batch", { allowed: ["GET", "HEAD", "POST"] }],
  // HEAD is GET without the body: it finds the GET route, and only that
  ["HEAD", "/api/v1/keys", { found: "GET /api/v1/keys", params: {} }],
  ["HEAD", "/docs/", { found: "GET /docs", params: {} }],
  ["HEAD", "/api/v1/proofs/p1/verify", { found: "GET /api/v1/proofs/:id/verify", params: { id: "p1" } }],
  ["HEAD", "/api/v1/keys/key_1", { allowed: ["DELETE"] }],
  // methods are case-sensitive (RFC 9110)
  ["get", "/api/v1/keys", { allowed: ["GET", "HEAD", "POST"] }],
  // unknown paths, prefixes and longer paths
  ["GET", "/", "not found"],
  ["GET", "", "not found"],
  ["GET", "/api/v1", "not found"],
  ["GET", "/api/v1/keys/key_1/extra", "not found"],
  ["GET", "/API/V1/KEYS", "not found"],
  ["GET", "/api/v1/keys?limit=1", "not found"]
]

describe("the router", () => {
  for (const [method, path, expected] of cases) {
    it(`${method} ${JSON.stringify(path)} → ${JSON.stringify(expected)}`, () => {
      expect(describeMatch(route(method, path))).toEqual(expected)
    })
  }
})
