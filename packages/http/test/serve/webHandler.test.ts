import { CircuitsConfig, DEFAULT_CIRCUITS_CONFIG } from "@mzk/core"
import { makeWebHandler } from "@mzk/http"
import { testCore } from "@mzk/testkit"
import { Layer, ManagedRuntime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { circomParts, multipart } from "../helpers.js"
import { type CallOptions, expectEnvelope, newAccountIn, type Reply } from "../support.js"

/**
 * The rest of the suite goes over a real port; embedders mount the fetch-style handler instead,
 * so it keeps a test of its own: in process, no socket.
 */

const runtime = ManagedRuntime.make(testCore())
let web: ReturnType<typeof makeWebHandler>
beforeAll(async () => {
  web = makeWebHandler(Layer.succeedContext((await runtime.runtime()).context))
})
afterAll(async () => {
  await web.dispose()
  await runtime.dispose()
})

const newAccount = newAccountIn((effect) => runtime.runPromise(effect))

const handle = async (request: Request): Promise<Reply> => {
  const response = await web.handler(request)
  const text = await response.text()
  let json: unknown
  try {
    json = text === "" ? undefined : JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status: response.status, headers: response.headers, text, json }
}

/** As the HTTP tests' `call`, into the handler instead of over a socket: a token becomes a bearer header, objects JSON. */
const call = (method: string, path: string, options: CallOptions = {}) => {
  const headers: Record<string, string> = { ...options.headers }
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`
  const body = options.body === undefined ? undefined : typeof options.body === "string" ? options.body : JSON.stringify(options.body)
  if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === "content-type")) headers["content-type"] = "application/json"
  return handle(new Request(`http://mzk.test${path}`, { method, headers, ...(body === undefined ? {} : { body }) }))
}

describe("makeWebHandler", () => {
  it("answers a request: 201 with the created key and a Request-Id", async () => {
    const { key } = await newAccount()
    const created = await call("POST", "/api/v1/keys", { token: key, body: { name: "embedded" } })
    expect(created.status).toBe(201)
    expect(created.headers.get("request-id")).toMatch(/^req_[0-9a-z]{26}$/)
    expect(created.json).toMatchObject({ name: "embedded" })
    expect((await call("GET", "/api/v1/keys", { token: created.json.key })).json.total).toBe(2)
  })

  it("answers errors with the envelope: 401 without a key, 404 for an unknown route", async () => {
    expectEnvelope(await call("GET", "/api/v1/keys"), 401, "invalid_api_key")
    expectEnvelope(await call("GET", "/api/v1/nothing"), 404, "not_found")
  })

  // A web Request need not declare its length; the handler must still hold bodies to 1 MiB.
  it("a streamed body over 1 MiB without a Content-Length is 413 payload_too_large", async () => {
    const { key } = await newAccount()
    const bytes = new TextEncoder().encode(JSON.stringify({ name: "big", description: "x".repeat(1024 * 1024) }))
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let at = 0; at < bytes.length; at += 64 * 1024) controller.enqueue(bytes.subarray(at, at + 64 * 1024))
        controller.close()
      }
    })
    const request = new Request("http://mzk.test/api/v1/keys", {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body,
      duplex: "half"
    } as RequestInit)
    expect(request.headers.has("content-length")).toBe(false)
    expectEnvelope(await handle(request), 413, "payload_too_large")
  })

  it("takes a multipart upload: 202 with the circuit compiling", async () => {
    const { key } = await newAccount()
    const { body, headers } = multipart(circomParts("embedded"))
    const reply = await call("POST", "/api/v1/circuits", { token: key, body, headers })
    expect(reply.status).toBe(202)
    expect(reply.json).toMatchObject({ name: "embedded", status: "compiling" })
  })

  // An upload streams through the parser; past the limit the handler stops pulling and cancels.
  it("stops reading an upload once it passes the limit: 413 upload_too_large, the rest never pulled", async () => {
    const LIMIT = 256 * 1024
    const small = ManagedRuntime.make(Layer.provideMerge(testCore(), Layer.succeed(CircuitsConfig, { ...DEFAULT_CIRCUITS_CONFIG, maxUploadBytes: LIMIT })))
    const limited = makeWebHandler(Layer.succeedContext((await small.runtime()).context))
    try {
      const { key } = await newAccountIn((effect) => small.runPromise(effect))()
      const chunk = new TextEncoder().encode("1".repeat(64 * 1024))
      let pulled = 0
      let cancelled = false
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          pulled += chunk.length
          controller.enqueue(chunk)
          if (pulled >= 64 * 1024 * 1024) controller.close()
        },
        cancel() {
          cancelled = true
        }
      }, { highWaterMark: 0 })
      const response = await limited.handler(new Request("http://mzk.test/api/v1/circuits", {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, ...multipart([]).headers },
        body,
        duplex: "half"
      } as RequestInit))
      expect(response.status).toBe(413)
      const json = (await response.json()) as { error: { code: string; message: string } }
      expect(json.error.code).toBe("upload_too_large")
      expect(json.error.message).toContain(`${LIMIT} bytes`)
      expect(cancelled).toBe(true)
      expect(pulled).toBeLessThanOrEqual(LIMIT + 4 * chunk.length)
    } finally {
      await limited.dispose()
      await small.dispose()
    }
  })
})
