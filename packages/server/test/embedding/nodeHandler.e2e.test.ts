import { type AccountId, Accounts, SessionAuthenticator } from "@mzk/core"
import { Effect, Layer, Option, Redacted } from "effect"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeNodeHandler } from "../../src/nodeHandler.js"
import { makeHttpClient } from "@mzk/testkit"

// An existing application: its own route, its own session store, mzk mounted under /api/v1.
const sessions = new Map<string, AccountId>()
const AppSessions = Layer.succeed(SessionAuthenticator, {
  authenticate: (token) => Effect.succeed(Option.fromNullable(sessions.get(Redacted.value(token))).pipe(Option.map((account_id) => ({ account_id }))))
})

let mzk: Awaited<ReturnType<typeof makeNodeHandler>>
let server: Server
let port: number

beforeAll(async () => {
  mzk = await makeNodeHandler({ database: { kind: "sqlite", filename: ":memory:" }, sessions: AppSessions })
  server = createServer((req, res) => {
    if (req.url?.startsWith("/api/v1/")) return mzk.handler(req, res)
    res.writeHead(200, { "content-type": "text/plain" }).end("the app's own page")
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  port = (server.address() as AddressInfo).port
})

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve))
  await mzk.dispose()
})

const call = (method: string, path: string, headers: Record<string, string>, options: { body?: string; chunkedBytes?: number } = {}) =>
  makeHttpClient(port, { keepAlive: false }).send(method, path, { headers, ...options })

describe("makeNodeHandler mounted in an existing node:http server", () => {
  it("serves mzk next to the app's own routes, with the app's sessions as bearer tokens", async () => {
    expect((await call("GET", "/", {})).text).toBe("the app's own page")
    const account = await mzk.runtime.runPromise(Effect.flatMap(Accounts, (a) => a.create({ name: "Ada" })))
    sessions.set("sess_ada", account.id)

    const created = await call("POST", "/api/v1/keys", { authorization: "Bearer sess_ada", "content-type": "application/json" }, {
      body: JSON.stringify({ name: "ci" })
    })
    expect(created.status).toBe(201)
    expect(created.headers.get("request-id")).toMatch(/^req_/)
    const key = (JSON.parse(created.text) as { key: string }).key

    const listed = await call("GET", "/api/v1/keys", { authorization: `Bearer ${key}` })
    expect(listed.status).toBe(200)
    expect((JSON.parse(listed.text) as { keys: Array<{ name: string }> }).keys.map((k) => k.name)).toEqual(["ci"])

    const unknown = await call("GET", "/api/v1/keys", { authorization: "Bearer sess_nobody" })
    expect(unknown.status).toBe(401)
    expect(JSON.parse(unknown.text)).toMatchObject({ error: { code: "invalid_api_key", request_id: unknown.headers.get("request-id") } })
  })

  it("answers a chunked body over 1 MiB with the 413 envelope, not a connection reset", async () => {
    sessions.set("sess_big", (await mzk.runtime.runPromise(Effect.flatMap(Accounts, (a) => a.create({ name: "Big" })))).id)
    const reply = await call("POST", "/api/v1/keys", { authorization: "Bearer sess_big", "content-type": "application/json" }, { chunkedBytes: 2_000_000 })
    expect(reply.status).toBe(413)
    expect(JSON.parse(reply.text)).toMatchObject({ error: { code: "payload_too_large" } })
    expect((await call("GET", "/", {})).status).toBe(200)
  })
})
