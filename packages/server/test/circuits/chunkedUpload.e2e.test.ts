import { it as effectIt } from "@effect/vitest"
import { type AccountId, Accounts, ApiKeys, SessionAuthenticator } from "@mzk/core"
import { Effect, Layer, Option, Redacted } from "effect"
import { createServer, type Server } from "node:http"
import { type AddressInfo, connect } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeNodeHandler } from "../../src/nodeHandler.js"
import { makeHttpClient } from "@mzk/testkit"
import { startServer } from "../realServer.js"

const FIVE_MB = 5 * 1024 * 1024

/**
 * What Python's `http.client` (and many other clients) do: write the whole request, body included,
 * and only then read the answer. The connection must stay open for the upload; a reset while
 * writing loses the answer.
 */
const uploadThenRead = (port: number, headers: string, bodyBytes: number) =>
  new Promise<{ status: number; headers: string; text: string; error?: string }>((resolve) => {
    const socket = connect(port, "127.0.0.1")
    const received: Array<Buffer> = []
    let error: string | undefined
    const done = () => {
      const raw = Buffer.concat(received).toString("utf8")
      const [head = "", body = ""] = raw.split("\r\n\r\n")
      resolve({ status: Number(head.split(" ")[1] ?? 0), headers: head.toLowerCase(), text: body, ...(error === undefined ? {} : { error }) })
    }
    socket.on("data", (chunk: Buffer) => received.push(chunk))
    socket.on("error", (e: NodeJS.ErrnoException) => void (error = e.code ?? e.message))
    socket.on("close", done)
    socket.setTimeout(20_000, () => socket.destroy(new Error("timeout")))
    const chunk = Buffer.alloc(64 * 1024, "1")
    let sent = 0
    const pump = () => {
      while (sent < bodyBytes) {
        sent += chunk.length
        if (!socket.write(Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from("\r\n")]))) return void socket.once("drain", pump)
      }
      socket.write("0\r\n\r\n")
    }
    socket.write(`POST /api/v1/keys HTTP/1.1\r\nHost: mzk\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n${headers}\r\n`)
    pump()
  })

const expect413 = (reply: { status: number; text: string; error?: string }) => {
  expect(reply.error, "no error while uploading").toBeUndefined()
  expect(reply.status).toBe(413)
  expect(JSON.parse(reply.text)).toMatchObject({ error: { code: "payload_too_large" } })
}

const newKey = Effect.gen(function*() {
  const account = yield* (yield* Accounts).create({ name: "Uploads" })
  return Redacted.value((yield* (yield* ApiKeys).create(account.id, { name: "k" })).secret)
})

describe("a 5 MB chunked upload over the 1 MiB limit gets its 413, not a broken pipe", () => {
  effectIt.scopedLive("mzk serve: node's http client and an upload-then-read client both read the 413", () =>
    Effect.gen(function*() {
      const { client, context, port } = yield* startServer()
      const key = yield* Effect.provide(newKey, context)
      const streamed = yield* Effect.promise(() =>
        client.send("POST", "/api/v1/keys", { headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, chunkedBytes: FIVE_MB })
      )
      expect413(streamed)
      expect(streamed.headers.get("connection")).toBe("close")
      expect413(yield* Effect.promise(() => uploadThenRead(port, `Authorization: Bearer ${key}\r\n`, FIVE_MB)))
    }), 30_000)

  describe("makeNodeHandler in an embedder's node:http server", () => {
    const sessions = new Map<string, AccountId>()
    let mzk: Awaited<ReturnType<typeof makeNodeHandler>>
    let server: Server
    let port: number
    beforeAll(async () => {
      mzk = await makeNodeHandler({
        database: { kind: "sqlite", filename: ":memory:" },
        sessions: Layer.succeed(SessionAuthenticator, {
          authenticate: (token) => Effect.succeed(Option.map(Option.fromNullable(sessions.get(Redacted.value(token))), (account_id) => ({ account_id })))
        })
      })
      server = createServer((req, res) => mzk.handler(req, res))
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
      port = (server.address() as AddressInfo).port
      sessions.set("sess_big", (await mzk.runtime.runPromise(Effect.flatMap(Accounts, (a) => a.create({ name: "Big" })))).id)
    })
    afterAll(async () => {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
      await mzk.dispose()
    })

    it("node's http client and an upload-then-read client both read the 413", async () => {
      const client = makeHttpClient(port, { keepAlive: false })
      expect413(await client.send("POST", "/api/v1/keys", { headers: { authorization: "Bearer sess_big", "content-type": "application/json" }, chunkedBytes: FIVE_MB }))
      expect413(await uploadThenRead(port, "Authorization: Bearer sess_big\r\n", FIVE_MB))
    }, 30_000)
  })
})
