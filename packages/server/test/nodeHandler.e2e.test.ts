import { type AccountId, Accounts, SessionAuthenticator } from "@mzk/core"
import { Effect, Layer, Option, Redacted } from "effect"
import { createServer, request, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeNodeHandler } from "../src/nodeHandler.js"

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

interface Answer {
  readonly status: number
  readonly headers: Record<string, string | Array<string> | undefined>
  readonly body: string
}

/** One request over the socket; `chunkedBytes` streams a body of that size with no Content-Length. */
const send = (method: string, path: string, headers: Record<string, string>, options: { body?: string; chunkedBytes?: number } = {}) =>
  new Promise<Answer>((resolve, reject) => {
    let answered = false
    const outgoing = request({ host: "127.0.0.1", port, method, path, headers, agent: false }, (response) => {
      answered = true
      let body = ""
      response.setEncoding("utf8")
      response.on("data", (chunk: string) => {
        body += chunk
      })
      response.on("end", () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }))
    })
    // Once answered, the server may close while the rest of an upload is still in flight.
    outgoing.on("error", (error) => {
      if (!answered) reject(error)
    })
    if (options.chunkedBytes === undefined) return void outgoing.end(options.body)
    const chunk = Buffer.alloc(64 * 1024, "1")
    let sent = 0
    const pump = () => {
      while (sent < options.chunkedBytes!) {
        sent += chunk.length
        if (!outgoing.write(chunk)) return void outgoing.once("drain", pump)
      }
      outgoing.end()
    }
    pump()
  })

describe("makeNodeHandler mounted in an existing node:http server", () => {
  it("serves mzk next to the app's own routes, with the app's sessions as bearer tokens", async () => {
    expect((await send("GET", "/", {})).body).toBe("the app's own page")
    const account = await mzk.runtime.runPromise(Effect.flatMap(Accounts, (a) => a.create({ name: "Ada" })))
    sessions.set("sess_ada", account.id)

    const created = await send("POST", "/api/v1/keys", { authorization: "Bearer sess_ada", "content-type": "application/json" }, {
      body: JSON.stringify({ name: "ci" })
    })
    expect(created.status).toBe(201)
    expect(created.headers["request-id"]).toMatch(/^req_/)
    const key = (JSON.parse(created.body) as { key: string }).key

    const listed = await send("GET", "/api/v1/keys", { authorization: `Bearer ${key}` })
    expect(listed.status).toBe(200)
    expect((JSON.parse(listed.body) as { keys: Array<{ name: string }> }).keys.map((k) => k.name)).toEqual(["ci"])

    const unknown = await send("GET", "/api/v1/keys", { authorization: "Bearer sess_nobody" })
    expect(unknown.status).toBe(401)
    expect(JSON.parse(unknown.body)).toMatchObject({ error: { code: "invalid_api_key", request_id: unknown.headers["request-id"] } })
  })

  it("answers a chunked body over 1 MiB with the 413 envelope, not a connection reset", async () => {
    sessions.set("sess_big", (await mzk.runtime.runPromise(Effect.flatMap(Accounts, (a) => a.create({ name: "Big" })))).id)
    const reply = await send("POST", "/api/v1/keys", { authorization: "Bearer sess_big", "content-type": "application/json" }, { chunkedBytes: 2_000_000 })
    expect(reply.status).toBe(413)
    expect(JSON.parse(reply.body)).toMatchObject({ error: { code: "payload_too_large" } })
    expect((await send("GET", "/", {})).status).toBe(200)
  })
})
