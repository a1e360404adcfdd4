import { Agent, type IncomingMessage, request } from "node:http"

/** An answer as tests read it: the body as text, and as JSON when it parses (`json` undefined otherwise). */
export interface HttpReply {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  // Tests read JSON bodies of every shape; typing each would only restate their assertions.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly json: any
}

export interface SendOptions {
  readonly headers?: Record<string, string> | undefined
  /** Sent with a Content-Length: text and bytes as they are, objects as JSON (with `Content-Type: application/json` unless given). */
  readonly body?: unknown | undefined
  /** Streams a body of this many bytes with no Content-Length (chunked), in 64 KiB writes with backpressure. */
  readonly chunkedBytes?: number
  /** Sent as `Authorization: Bearer <token>`. */
  readonly token?: string | undefined
}

export interface HttpClientOptions {
  /** A bearer token sent with every request that names none. */
  readonly token?: string | undefined
  /** Keep connections open between requests, over a few sockets, as a real client would (default true). */
  readonly keepAlive?: boolean
  /** A request with no answer by then fails (default 10 s): a hung request should fail its test, not the suite. */
  readonly timeoutMs?: number
}

export interface HttpClient {
  readonly send: (method: string, path: string, options?: SendOptions) => Promise<HttpReply>
  /** Closes the client's idle connections. */
  readonly close: () => void
}

const parse = (text: string): unknown => {
  try {
    return text === "" ? undefined : JSON.parse(text)
  } catch {
    return undefined
  }
}

const headersOf = (message: IncomingMessage) => {
  const headers = new Headers()
  for (let i = 0; i < message.rawHeaders.length; i += 2) headers.append(message.rawHeaders[i]!, message.rawHeaders[i + 1]!)
  return headers
}

const hasHeader = (headers: Record<string, string>, name: string) => Object.keys(headers).some((h) => h.toLowerCase() === name)

/**
 * An HTTP/1.1 client for one server (a base URL such as `http://127.0.0.1:8080`, or a loopback
 * port): the one client of the test suites. node:http rather than fetch, because undici forbids or
 * rewrites headers such as host, connection or content-length, and tests mean to send what they
 * say. Once a response has arrived, an error on the request (the server closing while the rest of
 * an upload is still in flight) no longer fails it.
 */
export const makeHttpClient = (server: string | number, options: HttpClientOptions = {}): HttpClient => {
  const base = new URL(typeof server === "number" ? `http://127.0.0.1:${server}` : server)
  const timeoutMs = options.timeoutMs ?? 10_000
  // Node expires idle sockets before the server's announced Keep-Alive timeout, so a reused socket
  // is never one the server has closed.
  const agent = options.keepAlive === false ? false : new Agent({ keepAlive: true, maxSockets: 4 })

  const send = (method: string, path: string, sent: SendOptions = {}): Promise<HttpReply> => attempt(method, path, sent, 0)

  // A kept-alive socket the server closed as idle while this process could not see it (its event
  // loop busy, as on a loaded machine) fails the next request sent on it with ECONNRESET before the
  // server read a byte of it; such a request is sent again on a fresh socket, as Node's http docs
  // advise (`request.reusedSocket`). Any other failure, or one on a new socket, is the caller's.
  const attempt = (method: string, path: string, sent: SendOptions, retries: number): Promise<HttpReply> =>
    new Promise<HttpReply>((resolve, reject) => {
      const headers: Record<string, string> = { ...sent.headers }
      const token = sent.token ?? options.token
      if (token !== undefined && !hasHeader(headers, "authorization")) headers.authorization = `Bearer ${token}`
      let body: string | Uint8Array | undefined
      if (sent.body !== undefined) {
        body = typeof sent.body === "string" || sent.body instanceof Uint8Array ? sent.body : JSON.stringify(sent.body)
        if (!hasHeader(headers, "content-type")) headers["content-type"] = "application/json"
        // Declared, not left to node: for DELETE and OPTIONS node would send the body with neither a
        // length nor chunking, and the server would read it as the start of the next request.
        if (!hasHeader(headers, "content-length")) headers["content-length"] = String(Buffer.byteLength(body))
      }
      let answered = false
      const outgoing = request(
        { host: base.hostname, port: base.port, method, path: `${base.pathname.replace(/\/$/, "")}${path}`, headers, agent, timeout: timeoutMs },
        (response) => {
          answered = true
          const chunks: Array<Buffer> = []
          response.on("data", (chunk: Buffer) => chunks.push(chunk))
          response.on("error", reject)
          response.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8")
            resolve({ status: response.statusCode ?? 0, headers: headersOf(response), text, json: parse(text) })
          })
        }
      )
      outgoing.on("timeout", () => outgoing.destroy(new Error(`${method} ${path}: no answer within ${timeoutMs} ms`)))
      outgoing.on("error", (error: NodeJS.ErrnoException) => {
        if (answered) return
        const stale = outgoing.reusedSocket && (error.code === "ECONNRESET" || error.code === "EPIPE")
        if (stale && retries < 3 && sent.chunkedBytes === undefined) resolve(attempt(method, path, sent, retries + 1))
        else reject(error)
      })
      const total = sent.chunkedBytes
      if (total === undefined) return void outgoing.end(body)
      const chunk = Buffer.alloc(64 * 1024, "1")
      let written = 0
      const pump = () => {
        while (written < total) {
          written += chunk.length
          if (!outgoing.write(chunk)) return void outgoing.once("drain", pump)
        }
        outgoing.end()
      }
      pump()
    })

  return { send, close: () => (agent === false ? undefined : agent.destroy()) }
}

/** Polls `ready` until it holds (a server answering, a row written), or fails after `timeoutMs`. */
export const eventually = async <A>(probe: () => Promise<A | undefined>, timeoutMs = 5_000, everyMs = 20): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    try {
      const value = await probe()
      if (value !== undefined) return value
    } catch (error) {
      if (Date.now() > deadline) throw error
    }
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, everyMs))
  }
}
