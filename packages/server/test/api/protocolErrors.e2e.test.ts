import { expect, it } from "@effect/vitest"
import { Accounts, ApiKeys } from "@mzk/core"
import { Effect, Redacted } from "effect"
import { connect } from "node:net"
import { describe } from "vitest"
import { startServer } from "../realServer.js"

/** Writes raw bytes to the server and reads until it closes the connection (or 5 s pass). */
const exchange = (port: number, bytes: string) =>
  Effect.promise(() =>
    new Promise<string>((resolve, reject) => {
      const socket = connect(port, "127.0.0.1", () => socket.write(bytes))
      let received = ""
      socket.setEncoding("utf8")
      socket.on("data", (chunk: string) => {
        received += chunk
      })
      socket.on("close", () => resolve(received))
      socket.on("error", reject)
      socket.setTimeout(5_000, () => socket.destroy(new Error(`no close after ${JSON.stringify(received)}`)))
    })
  )

const parse = (raw: string) => {
  const [head = "", body = ""] = raw.split("\r\n\r\n")
  const [statusLine = "", ...lines] = head.split("\r\n")
  const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(":")).toLowerCase(), line.slice(line.indexOf(":") + 1).trim()]))
  return { status: Number(statusLine.split(" ")[1]), headers, json: JSON.parse(body) as { error: { code: string; request_id: string } } }
}

describe("requests Node's HTTP parser refuses, over a real port", () => {
  it.scopedLive("get the error envelope and a Request-Id, not Node's empty 400", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* startServer()
      const port = Number(new URL(baseUrl).port)
      const malformed = [
        "GARBAGE\r\n\r\n",
        "GET /api/v1/keys HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n",
        "POST /api/v1/keys HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        `GET /api/v1/keys HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`
      ]
      for (const bytes of malformed) {
        const reply = parse(yield* exchange(port, bytes))
        expect(reply.status, bytes.slice(0, 60)).toBe(400)
        expect(reply.json.error.code).toBe("invalid_request")
        expect(reply.headers["request-id"]).toMatch(/^req_[0-9a-z]{26}$/)
        expect(reply.json.error.request_id).toBe(reply.headers["request-id"])
      }
    }), 30_000)

  it.scopedLive("an Expect other than 100-continue is refused in the envelope, not with Node's empty 417", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* startServer()
      const reply = parse(yield* exchange(Number(new URL(baseUrl).port), "GET /api/v1/keys HTTP/1.1\r\nHost: x\r\nExpect: something-else\r\n\r\n"))
      expect(reply.status).toBe(400)
      expect(reply.json.error.code).toBe("invalid_request")
      expect(reply.json.error.request_id).toBe(reply.headers["request-id"])
    }), 30_000)

  it.scopedLive("a request without a Host header is served like any other", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* startServer()
      const reply = parse(yield* exchange(Number(new URL(baseUrl).port), "GET /api/v1/keys HTTP/1.1\r\nConnection: close\r\n\r\n"))
      expect(reply.status).toBe(401)
      expect(reply.json.error.code).toBe("invalid_api_key")
    }), 30_000)

  it.scopedLive("an absolute-form request target (as sent to a proxy) is routed by its path and query", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* startServer()
      const port = Number(new URL(baseUrl).port)
      const listed = parse(yield* exchange(port, `GET http://mzk.example${"/api/v1/keys?limit=5"} HTTP/1.1\r\nHost: mzk.example\r\nConnection: close\r\n\r\n`))
      expect(listed.status).toBe(401)
      expect(listed.json.error.code).toBe("invalid_api_key")
      const unknown = parse(yield* exchange(port, "GET http://mzk.example/nowhere HTTP/1.1\r\nHost: mzk.example\r\nConnection: close\r\n\r\n"))
      expect(unknown.status).toBe(404)
      expect(unknown.json.error.code).toBe("not_found")
    }), 30_000)

  it.scopedLive("a chunked body over 1 MiB gets its 413 envelope, not a connection reset", () =>
    Effect.gen(function*() {
      const { client, context, port } = yield* startServer()
      const key = yield* Effect.gen(function*() {
        const account = yield* (yield* Accounts).create({ name: "Uploads" })
        return Redacted.value((yield* (yield* ApiKeys).create(account.id, { name: "k" })).secret)
      }).pipe(Effect.provide(context))
      for (const bytes of [1_200_000, 3_000_000]) {
        const reply = yield* Effect.promise(() =>
          client.send("POST", "/api/v1/keys", { headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, chunkedBytes: bytes })
        )
        expect(reply.status, `${bytes} bytes`).toBe(413)
        expect(reply.json).toMatchObject({ error: { code: "payload_too_large", request_id: reply.headers.get("request-id") } })
        expect(reply.headers.get("connection")).toBe("close")
      }
      // The server goes on serving.
      const after = parse(yield* exchange(port, `GET /api/v1/keys HTTP/1.1\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n\r\n`))
      expect(after.status).toBe(200)
    }), 30_000)
})
