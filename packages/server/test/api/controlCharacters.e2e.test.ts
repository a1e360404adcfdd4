import { expect, it } from "@effect/vitest"
import { HttpApi, type HttpApiEndpoint } from "@effect/platform"
import { MzkApi } from "@mzk/http"
import { Effect, Option, SchemaAST as AST } from "effect"
import { describe } from "vitest"
import { describePostgres, type Reply, serverWithKey, STORES } from "../bothStores.js"

/** Every endpoint of the API definition: its method, path template, declared query parameters, and whether it takes an upload. */
const endpoints = (() => {
  const found: Array<{ method: string; path: string; query: ReadonlyArray<string>; upload: boolean }> = []
  HttpApi.reflect(MzkApi, {
    onGroup: () => undefined,
    onEndpoint: ({ endpoint, payloads }) => {
      const e = endpoint as unknown as HttpApiEndpoint.HttpApiEndpoint.AnyWithProps
      const query = Option.match(e.urlParamsSchema, {
        onNone: () => [],
        onSome: (schema) => AST.getPropertySignatures(schema.ast).map((p) => String(p.name))
      })
      found.push({ method: e.method, path: e.path, query, upload: payloads.has("multipart/form-data") })
    }
  })
  return found
})()

/** Percent-encoded, as a client sends them: NUL (which Postgres text cannot hold) and a line feed. */
const CONTROLS = ["%00", "%0A"]

const BOUNDARY = "mzk-walk"

/**
 * Sends `method path` with a body its endpoint reads past its content-type check (an empty JSON
 * object, or an empty multipart form for an upload), so the answer is about the URL.
 */
const sender = (baseUrl: string, key: string) => (method: string, path: string, upload: boolean) =>
  Effect.promise(async (): Promise<Reply> => {
    const body = method === "GET" || method === "DELETE" ? undefined : upload ? `--${BOUNDARY}--\r\n` : "{}"
    const headers: Record<string, string> = { authorization: `Bearer ${key}` }
    if (body !== undefined) {
      headers["content-type"] = upload ? `multipart/form-data; boundary=${BOUNDARY}` : "application/json"
      headers["content-length"] = String(Buffer.byteLength(body))
    }
    const response = await fetch(`${baseUrl}${path}`, { method, headers, ...(body === undefined ? {} : { body }) })
    const text = await response.text()
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch {
      json = undefined
    }
    return { status: response.status, requestId: response.headers.get("request-id"), json }
  })

/** What is wrong with `reply`, if it is not a 400 `invalid_request` whose details name `name`, with its request id. */
const problem = (what: string, reply: Reply, name: string): string | undefined => {
  const error = reply.json?.error
  const named = (error?.details ?? []).some((d: { path: string }) => d.path === name)
  return reply.status === 400 && error?.code === "invalid_request" && error.request_id === reply.requestId && named
    ? undefined
    : `${what}: ${reply.status} ${JSON.stringify(reply.json)}`
}

/**
 * Every path parameter and every query value of every route of the API, with a control character
 * in it: a 400 naming it, on both stores, before anything reaches the database (Postgres answered
 * a NUL in a circuit name with 503, the same request SQLite answered with 404).
 */
const walk = (database: (typeof STORES)[number][1]) =>
  Effect.gen(function*() {
    const { baseUrl, key } = yield* serverWithKey(database)
    const send = sender(baseUrl, key)
    let asked = 0
    const wrong: Array<string> = []
    const check = (what: string, reply: Reply, name: string) => {
      asked++
      const found = problem(what, reply, name)
      if (found !== undefined) wrong.push(found)
    }
    for (const { method, path, query, upload } of endpoints) {
      const params = path.split("/").filter((s) => s.startsWith(":")).map((s) => s.slice(1))
      const plain = path.replace(/:(\w+)/g, "x")
      for (const control of CONTROLS) {
        for (const param of params) {
          const url = path.replace(/:(\w+)/g, (_, name: string) => (name === param ? `a${control}b` : "x"))
          check(`${method} ${url}`, yield* send(method, url, upload), param)
        }
        // The query values the route declares, and one it does not: none reaches storage.
        for (const name of [...query, "unknown"]) {
          const url = `${plain}?${name}=a${control}b`
          check(`${method} ${url}`, yield* send(method, url, upload), name)
        }
      }
    }
    // Every refusal at once, so a failure lists each route that answers otherwise.
    expect(wrong).toEqual([])
    // The walk reached every route: 33 routes and their parameters, in two characters.
    expect(endpoints.length).toBeGreaterThan(30)
    expect(asked).toBeGreaterThan(2 * endpoints.length)
  })

describe("control characters in URLs, on every route over a real port", () => {
  it.scopedLive("SQLite: a NUL or line feed in any path parameter or query value is 400 naming it", () => walk(STORES[0]![1]), 60_000)
  describePostgres("Postgres", () => {
    it.scopedLive("Postgres: a NUL or line feed in any path parameter or query value is 400 naming it, never 503", () => walk(STORES[1]![1]), 60_000)
  })
})
