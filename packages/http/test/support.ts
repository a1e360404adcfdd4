import { Accounts, ApiKeys, type AccountId, type SessionAuthenticator } from "@mzk/core"
import { makeNodeListener } from "@mzk/http"
import { testCore } from "@mzk/testkit"
import { Context, Effect, Layer, ManagedRuntime, Redacted } from "effect"
import { Agent, createServer, type IncomingMessage, request } from "node:http"
import type { AddressInfo } from "node:net"

export interface Reply {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  readonly json: any
}

export type Core = Layer.Layer.Success<ReturnType<typeof testCore>>
export type CoreRun = <A, E>(effect: Effect.Effect<A, E, Core>) => Promise<A>

export interface CallOptions {
  readonly token?: string | undefined
  readonly body?: unknown
  readonly headers?: Record<string, string>
}

/** A body that is not JSON (malformed on purpose, or empty) reads as `json: undefined`. */
export const toReply = (status: number, headers: Headers, text: string): Reply => {
  let json: unknown
  try {
    json = text === "" ? undefined : JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status, headers, text, json }
}

const hasHeader = (headers: Record<string, string>, name: string) => Object.keys(headers).some((h) => h.toLowerCase() === name)

/** The request headers and body `call` sends: a token becomes a bearer header, objects become JSON. */
export const requestParts = (options: CallOptions) => {
  const headers: Record<string, string> = { ...options.headers }
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`
  if (options.body === undefined) return { headers, body: undefined }
  const body = typeof options.body === "string" ? options.body : JSON.stringify(options.body)
  if (!hasHeader(headers, "content-type")) headers["content-type"] = "application/json"
  return { headers, body }
}

/** A new account with its first all-scope key, made through the core (as `accounts create` does). */
export const newAccountIn = (run: CoreRun) => (name = "Acme") =>
  run(Effect.gen(function*() {
    const account = yield* (yield* Accounts).create({ name })
    const created = yield* (yield* ApiKeys).create(account.id, { name: "bootstrap" })
    return { account: account.id as AccountId, key: Redacted.value(created.secret) }
  }))

/** mzk's Node listener (as `mzk serve` and `makeNodeHandler` use it) in a `node:http` server on a free loopback port, over `core`. */
const listen = async (core: Context.Context<Core>) => {
  const listener = await Effect.runPromise(Effect.provide(makeNodeListener, core))
  const server = createServer(listener)
  await new Promise<void>((resolve, reject) => server.once("error", reject).listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    port,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
  }
}

// Every request here is answered in milliseconds; a hung one should fail its test, not the suite's timeout.
const REQUEST_TIMEOUT_MS = 10_000

const headersOf = (message: IncomingMessage) => {
  const headers = new Headers()
  for (let i = 0; i < message.rawHeaders.length; i += 2) headers.append(message.rawHeaders[i]!, message.rawHeaders[i + 1]!)
  return headers
}

/**
 * An HTTP/1.1 client for one loopback port. node:http rather than fetch: undici forbids or rewrites
 * headers such as host, connection or content-length, and the tests mean to send what they say.
 * Bodies go with a Content-Length, as most clients send them.
 */
const clientFor = (port: number) => {
  // Keep-alive over a few sockets, as a real client would; node expires idle ones before the
  // server's announced Keep-Alive timeout, so a reused socket is never one the server has closed.
  const agent = new Agent({ keepAlive: true, maxSockets: 4 })

  const send = (method: string, path: string, headers: Record<string, string>, body: string | undefined) =>
    new Promise<Reply>((resolve, reject) => {
      const outgoing = request({ host: "127.0.0.1", port, method, path, headers, agent, timeout: REQUEST_TIMEOUT_MS }, (response) => {
        const chunks: Array<Buffer> = []
        response.on("data", (chunk: Buffer) => chunks.push(chunk))
        response.on("error", reject)
        response.on("end", () => resolve(toReply(response.statusCode ?? 0, headersOf(response), Buffer.concat(chunks).toString("utf8"))))
      })
      outgoing.on("timeout", () => outgoing.destroy(new Error(`${method} ${path}: no answer within ${REQUEST_TIMEOUT_MS} ms`)))
      outgoing.on("error", reject)
      outgoing.end(body)
    })

  const call = (method: string, path: string, options: CallOptions = {}): Promise<Reply> => {
    const { headers, body } = requestParts(options)
    // Declared, not left to node: for DELETE and OPTIONS node would send the body with neither a
    // length nor chunking, and the server would read it as the start of the next request.
    if (body !== undefined && !hasHeader(headers, "content-length")) headers["content-length"] = String(Buffer.byteLength(body))
    return send(method, path, headers, body)
  }

  return { call, close: () => agent.destroy() }
}

/**
 * The HTTP surface over one running core, served on a real TCP socket (127.0.0.1, a port the OS
 * picks), plus the core's services for arranging state. `close` stops the client, the server and
 * then the core.
 */
export const harnessOver = async (runtime: ManagedRuntime.ManagedRuntime<Core, never>) => {
  const server = await listen((await runtime.runtime()).context)
  const client = clientFor(server.port)
  const run: CoreRun = (effect) => runtime.runPromise(effect)

  const close = async () => {
    client.close()
    await server.close()
    await runtime.dispose()
  }

  return { call: client.call, run, newAccount: newAccountIn(run), close }
}

/** The harness over the in-memory core; `sessions` plugs in an embedding app's authenticator. */
export const makeHarness = (sessions?: Layer.Layer<SessionAuthenticator>) =>
  harnessOver(ManagedRuntime.make(sessions === undefined ? testCore() : Layer.merge(testCore(), sessions)))

/** Every error answer must carry the envelope and the response's own request id. */
export const expectEnvelope = (reply: Reply, status: number, code: string) => {
  if (reply.status !== status || reply.json?.error?.code !== code) {
    throw new Error(`expected ${status} ${code}, got ${reply.status} ${reply.text}`)
  }
  const requestId = reply.headers.get("request-id")
  if (requestId === null || !/^req_[0-9a-z]{26}$/.test(requestId) || reply.json.error.request_id !== requestId) {
    throw new Error(`request id missing or different: header ${requestId}, body ${reply.json.error.request_id}`)
  }
  if (typeof reply.json.error.message !== "string" || reply.json.error.message === "") throw new Error("no message")
}
