import {
  classifyAddress,
  HostResolutionFailure,
  HostResolver,
  isIpLiteral,
  RESPONSE_BODY_LIMIT_BYTES,
  TransportFailure,
  WebhookTransport,
  type WebhookRequest,
  type WebhookResponse
} from "@mzk/core"
import { Effect, Layer } from "effect"
import { promises as dns } from "node:dns"
import http from "node:http"
import https from "node:https"
import type { LookupFunction } from "node:net"

export interface ResolvedAddress {
  readonly address: string
  readonly family: 4 | 6
}

/** Host name → every address it has. Injected in tests, so they never ask real DNS. */
export type Resolver = (hostname: string) => Promise<ReadonlyArray<ResolvedAddress>>

/** The system resolver (`getaddrinfo`, so /etc/hosts counts), every address, in its order. */
export const systemResolver: Resolver = async (hostname) =>
  (await dns.lookup(hostname, { all: true, verbatim: true })).map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }))

export interface NodeWebhookTransportOptions {
  readonly resolver?: Resolver
  /**
   * Development only, with the core's `allowInsecureWebhooks`: allow `http://` and non-public
   * addresses, so a receiver on this machine can be reached.
   */
  readonly allowInsecure?: boolean
}

/**
 * Keep-alive pools are per webhook and never queue: each request gets a connection at once, so how
 * many run at a time is the delivery engine's per-webhook cap (`maxConcurrentPerWebhook`), and one
 * webhook's hanging receiver cannot hold up another webhook's, whoever owns it, on the same host.
 * Idle connections close after `IDLE_SOCKET_MS`; past `MAX_IDLE_POOLS` pools, idle ones are dropped.
 */
const IDLE_SOCKET_MS = 15_000
const MAX_IDLE_POOLS = 256

const failure = (reason: TransportFailure["reason"], message: string) => new TransportFailure({ reason, message })

const TLS_CODES = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|EPROTO$|HOSTNAME_MISMATCH|ERR_OSSL)/
const CONNECTION_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "EHOSTUNREACH", "ENETUNREACH", "EPIPE", "ECONNABORTED", "ETIMEDOUT", "EADDRNOTAVAIL"])

const classifyError = (error: NodeJS.ErrnoException): TransportFailure => {
  const code = error.code ?? ""
  if (TLS_CODES.test(code)) return failure("tls", `TLS failed (${code})`)
  if (CONNECTION_CODES.has(code) || code === "ERR_SOCKET_CONNECTION_TIMEOUT") return failure("connection", `Connection failed (${code})`)
  if (code === "HPE_INVALID_CONSTANT" || code.startsWith("HPE_")) return failure("other", `Malformed HTTP response (${code})`)
  return failure("other", `Request failed${code === "" ? "" : ` (${code})`}`)
}

/** A `lookup` that answers with the one address already checked, whatever the name. */
const pinnedLookup = (pinned: ResolvedAddress): LookupFunction =>
  ((_hostname: string, options: { all?: boolean }, callback: (...args: Array<unknown>) => void) => {
    if (options?.all === true) callback(null, [{ address: pinned.address, family: pinned.family }])
    else callback(null, pinned.address, pinned.family)
  }) as unknown as LookupFunction

/**
 * The production `WebhookTransport`: one POST over node:http(s).
 *
 * SSRF: the host is resolved here, every answer must be public, and the socket is opened to the
 * address that was checked (a `lookup` pinned to it), so a DNS answer that changes between check
 * and connect (rebinding) is never used. TLS still verifies the certificate against the host
 * name, and the Host header stays the name. Redirects are not followed (the 3xx is the answer),
 * at most 4 KiB of the body is read, `Retry-After` is passed on, and the whole exchange is bounded by `timeoutMs`, counted
 * from when the request has its socket. Connections are pooled per webhook (`webhookId`), never
 * per host, so no attempt waits behind another webhook's.
 */
export const makeNodeWebhookTransport = (options: NodeWebhookTransportOptions = {}) => {
  const resolver = options.resolver ?? systemResolver
  const allowInsecure = options.allowInsecure ?? false
  const pools = new Map<string, http.Agent>()
  const isIdle = (agent: http.Agent) => Object.keys(agent.sockets).length === 0 && Object.keys(agent.requests).length === 0
  /** The pool of one webhook (and scheme), most recently used last in the map. */
  const poolFor = (request: WebhookRequest, secure: boolean): http.Agent => {
    const key = `${secure ? "https" : "http"} ${request.webhookId ?? ""}`
    let agent = pools.get(key)
    if (agent !== undefined) pools.delete(key)
    else {
      for (const [idleKey, idle] of pools) {
        if (pools.size < MAX_IDLE_POOLS) break
        if (!isIdle(idle)) continue
        idle.destroy()
        pools.delete(idleKey)
      }
      const agentOptions = { keepAlive: true, maxSockets: Infinity, timeout: IDLE_SOCKET_MS }
      agent = secure ? new https.Agent(agentOptions) : new http.Agent(agentOptions)
    }
    pools.set(key, agent)
    return agent
  }

  const target = (request: WebhookRequest) =>
    Effect.gen(function*() {
      let url: URL
      try {
        url = new URL(request.url)
      } catch {
        return yield* failure("invalid_url", "The webhook URL is not a valid URL")
      }
      if (url.protocol !== "https:" && !(allowInsecure && url.protocol === "http:")) {
        return yield* failure("invalid_url", `Scheme ${url.protocol} is not allowed`)
      }
      const hostname = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname
      let addresses: ReadonlyArray<ResolvedAddress>
      if (isIpLiteral(hostname)) {
        addresses = [{ address: hostname, family: hostname.includes(":") ? 6 : 4 }]
      } else {
        addresses = yield* Effect.tryPromise({
          try: () => resolver(hostname),
          catch: (error) => failure("dns", `Could not resolve the host (${(error as NodeJS.ErrnoException).code ?? "error"})`)
        })
        if (addresses.length === 0) return yield* failure("dns", "The host has no address")
      }
      if (!allowInsecure) {
        // Every answer must be public: the one used is pinned, but a mixed answer marks a host
        // that someone points inside networks.
        for (const { address } of addresses) {
          const cls = classifyAddress(address)
          if (cls !== "public") return yield* failure("blocked_address", `The host resolves to a non-public address (${cls})`)
        }
      }
      return { url, hostname, pinned: addresses[0]! }
    })

  const post = (request: WebhookRequest, url: URL, hostname: string, pinned: ResolvedAddress) =>
    Effect.async<WebhookResponse, TransportFailure>((resume) => {
      const secure = url.protocol === "https:"
      const body = Buffer.from(request.body, "utf8")
      let settled = false
      let timer: ReturnType<typeof setTimeout> | undefined
      const settle = (effect: Effect.Effect<WebhookResponse, TransportFailure>) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        resume(effect)
      }
      const req = (secure ? https : http).request({
        protocol: url.protocol,
        hostname,
        port: url.port === "" ? undefined : Number(url.port),
        path: `${url.pathname}${url.search}`,
        method: "POST",
        headers: { ...request.headers, "Content-Length": String(body.length) },
        agent: poolFor(request, secure),
        lookup: pinnedLookup(pinned),
        ...(secure && !isIpLiteral(hostname) ? { servername: hostname } : {})
      }, (res) => {
        const chunks: Array<Buffer> = []
        let size = 0
        const finish = () => {
          const text = Buffer.concat(chunks).subarray(0, RESPONSE_BODY_LIMIT_BYTES).toString("utf8")
          // The one response header the engine reads: a 429 or 503 may ask when to come back.
          const retryAfter = res.headers["retry-after"]
          settle(Effect.succeed({ status: res.statusCode ?? 0, body: text, ...(retryAfter === undefined ? {} : { retryAfter }) }))
        }
        res.on("data", (chunk: Buffer) => {
          if (size >= RESPONSE_BODY_LIMIT_BYTES) return
          chunks.push(chunk)
          size += chunk.length
          if (size >= RESPONSE_BODY_LIMIT_BYTES) {
            // Enough: the rest is never read, and the socket goes rather than back to the pool.
            finish()
            res.destroy()
          }
        })
        res.on("end", finish)
        res.on("error", (error: NodeJS.ErrnoException) => settle(Effect.fail(classifyError(error))))
      })
      // The attempt's time runs from when it has a socket (at once: the pools never queue).
      req.once("socket", () => {
        if (settled) return
        timer ??= setTimeout(() => {
          settle(Effect.fail(failure("timeout", `No answer within ${request.timeoutMs} ms`)))
          req.destroy()
        }, request.timeoutMs)
      })
      req.on("error", (error: NodeJS.ErrnoException) => settle(Effect.fail(classifyError(error))))
      req.end(body)
      return Effect.sync(() => {
        settled = true
        clearTimeout(timer)
        req.destroy()
      })
    })

  const send = (request: WebhookRequest) =>
    Effect.flatMap(target(request), ({ hostname, pinned, url }) => post(request, url, hostname, pinned))

  return {
    transport: WebhookTransport.of({ send }),
    close: () => {
      for (const agent of pools.values()) agent.destroy()
      pools.clear()
    }
  }
}

/** The Node transport as a layer; its connection pools close with the layer's scope. */
export const NodeWebhookTransport = (options: NodeWebhookTransportOptions = {}): Layer.Layer<WebhookTransport> =>
  Layer.scoped(
    WebhookTransport,
    Effect.map(
      Effect.acquireRelease(Effect.sync(() => makeNodeWebhookTransport(options)), (made) => Effect.sync(made.close)),
      (made) => made.transport
    )
  )

/** The create-time `HostResolver` over the same resolver the transport uses. */
export const NodeHostResolver = (resolver: Resolver = systemResolver): Layer.Layer<HostResolver> =>
  Layer.succeed(HostResolver, {
    resolve: (hostname) =>
      Effect.tryPromise({
        try: async () => (await resolver(hostname)).map((a) => a.address),
        catch: () => new HostResolutionFailure({ message: "The host could not be resolved" })
      })
  })
