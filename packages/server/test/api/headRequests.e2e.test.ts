import { expect, it } from "@effect/vitest"
import { Accounts, ApiKeys } from "@mzk/core"
import { makeWebHandler } from "@mzk/http"
import { testCore } from "@mzk/testkit"
import { Effect, Layer, Redacted } from "effect"
import { connect } from "node:net"
import { describe } from "vitest"
import { startServer } from "../realServer.js"

/** Writes raw requests on one connection and reads until the server closes it. */
const exchange = (port: number, bytes: string) =>
  new Promise<string>((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(bytes))
    let received = ""
    socket.setEncoding("utf8")
    socket.on("data", (chunk: string) => void (received += chunk))
    socket.on("close", () => resolve(received))
    socket.on("error", reject)
    socket.setTimeout(5_000, () => socket.destroy(new Error(`no close after ${JSON.stringify(received)}`)))
  })

const newKey = Effect.gen(function*() {
  const account = yield* (yield* Accounts).create({ name: "Heads" })
  return Redacted.value((yield* (yield* ApiKeys).create(account.id, { name: "k" })).secret)
})

describe("HEAD wherever GET is served (RFC 9110 §9.3.2)", () => {
  it.scopedLive("mzk serve answers HEAD as GET without the body: same status and headers, errors included", () =>
    Effect.gen(function*() {
      const { client, context, port } = yield* startServer()
      const key = yield* Effect.provide(newKey, context)
      const auth = { authorization: `Bearer ${key}` }
      const both = (path: string, headers: Record<string, string>) =>
        Effect.promise(() => Promise.all([client.send("GET", path, { headers }), client.send("HEAD", path, { headers })]))

      for (const [path, headers, status] of [
        ["/api/v1/keys", auth, 200],
        ["/api/v1/webhooks?limit=5", auth, 200],
        ["/api/v1/circuits", auth, 200],
        ["/api/v1/openapi.json", {}, 200],
        ["/api/v1/keys", {}, 401],
        [`/api/v1/proofs/proof_${"0".repeat(26)}`, auth, 404],
        ["/api/v1/proofs?starting_after=garbage", auth, 400]
      ] as const) {
        const [get, head] = yield* both(path, headers)
        expect([path, get.status, head.status]).toEqual([path, status, status])
        expect(head.text, path).toBe("")
        expect(head.headers.get("content-type"), path).toBe(get.headers.get("content-type"))
        expect(head.headers.get("content-length"), path).toBe(String(Buffer.byteLength(get.text)))
        expect(head.headers.get("request-id"), path).toMatch(/^req_[0-9a-z]{26}$/)
      }
      // No body bytes follow the head: the next request on the connection is read correctly.
      const raw = yield* Effect.promise(() =>
        exchange(port, `HEAD /api/v1/keys HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n\r\nGET /api/v1/keys HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n\r\n`)
      )
      const [headReply, getReply] = raw.split(/(?=HTTP\/1\.1 )/)
      expect(headReply).toMatch(/^HTTP\/1\.1 200 [^]*\r\n\r\n$/)
      expect(getReply).toMatch(/^HTTP\/1\.1 200 [^]*\r\n\r\n\{"keys":/)

      // A path without GET still refuses HEAD; where GET is allowed, Allow names HEAD too.
      const keyPath = `/api/v1/keys/key_${"0".repeat(26)}`
      const [getKey, headKey] = yield* both(keyPath, auth)
      expect([getKey.status, getKey.headers.get("allow")]).toEqual([405, "DELETE"])
      expect([headKey.status, headKey.headers.get("allow"), headKey.text]).toEqual([405, "DELETE", ""])
      const put = yield* Effect.promise(() => client.send("PUT", "/api/v1/keys", { headers: { ...auth, "content-type": "application/json" }, body: "{}" }))
      expect([put.status, put.headers.get("allow")]).toEqual([405, "POST, GET, HEAD"])
    }), 30_000)

  it.scopedLive("the fetch-style handler answers HEAD without a body too", () =>
    Effect.gen(function*() {
      const core = yield* Layer.build(testCore())
      const web = makeWebHandler(Layer.succeedContext(core))
      yield* Effect.addFinalizer(() => Effect.promise(() => web.dispose()))
      const key = yield* Effect.provide(newKey, core)
      const response = yield* Effect.promise(() =>
        web.handler(new Request("http://mzk.test/api/v1/keys", { method: "HEAD", headers: { authorization: `Bearer ${key}` } }))
      )
      expect(response.status).toBe(200)
      expect(response.headers.get("content-type")).toBe("application/json")
      expect(yield* Effect.promise(() => response.text())).toBe("")
    }), 30_000)
})
