import { InvalidRequest } from "@mzk/core"
import { Effect, Exit, Runtime, Stream } from "effect"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import { type Duplex, pipeline, Readable } from "node:stream"
import { MzkApi } from "../api/index.js"
import { type Dispatch, type HttpServices, makeDispatcher } from "../serve/dispatch.js"
import { makeErrorEncoder } from "../serve/encode.js"
import { type BodyError, isStreamedBody, type MzkRequest, type MzkResponse, type StreamedBody } from "../wire/message.js"
import { MAX_BODY_BYTES, sendsAcceptableBody } from "../wire/precheck.js"
import { makeRequestIds } from "../wire/requestId.js"
import { apiPath, consumedBody, consumedStream, consumedText, mountedPath, routesAsIs } from "./mount.js"

/** How much of an over-long body is read and thrown away so its client can read the 413. */
const DISCARD_LIMIT_BYTES = 16 * 1024 * 1024

/** Responses held back (by a listener) until the rest of their request's body has been read and discarded. */
type Held = WeakMap<ServerResponse, Array<() => void>>

/**
 * The rest of a body past the cap is read and discarded (up to a bound) rather than the socket
 * reset, so a chunked upload over 1 MiB, which has no Content-Length to refuse early, still gets
 * its 413. The answer waits until the upload has ended (or passed the bound), since closing the
 * connection while a client still writes resets it, and a client that reads only once it has sent
 * everything (Python's http.client, node's http) then loses the answer. The connection closes
 * after the response.
 */
const discardRest = (request: IncomingMessage, response: ServerResponse, held: Held) => {
  response.shouldKeepAlive = false
  const waiting: Array<() => void> = []
  held.set(response, waiting)
  let discarded = 0
  const onData = (chunk: Buffer) => {
    discarded += chunk.length
    // Past the bound: answer now and let the connection close on whatever is still coming.
    if (discarded > DISCARD_LIMIT_BYTES) release()
  }
  const release = () => {
    request.off("data", onData).off("end", release).off("close", release)
    held.delete(response)
    for (const write of waiting.splice(0)) write()
  }
  request.on("data", onData).on("end", release).on("close", release)
  request.resume()
}

type BodyResult = Effect.Effect<string, BodyError>

/**
 * Reads a Node request's body chunk by chunk, each handed to `sink` while the total stays within
 * `limitBytes`; past it the rest is discarded (the answer is held until it is, see `discardRest`).
 * The outcome is handed over once: `"end"`, or why the body could not be had. Returns a function
 * that stops listening. The one reader of both JSON bodies and uploads. A `sink` that returns a
 * promise pauses the request until it settles: TCP's flow control then slows the client.
 */
const readBody = (
  request: IncomingMessage,
  response: ServerResponse,
  held: Held,
  limitBytes: number,
  sink: (chunk: Buffer) => void | Promise<void>,
  done: (outcome: "end" | BodyError) => void
) => {
  let size = 0
  const stop = () => {
    request.off("data", onData)
    request.off("end", onEnd)
    request.off("error", onFailure)
    request.off("close", onFailure)
  }
  const onData = (chunk: Buffer) => {
    size += chunk.length
    if (size <= limitBytes) {
      const taken = sink(chunk)
      if (taken !== undefined) {
        request.pause()
        void taken.then(() => request.resume())
      }
      return
    }
    stop()
    discardRest(request, response, held)
    done({ _tag: "BodyTooLarge" })
  }
  const onEnd = () => {
    stop()
    done("end")
  }
  const onFailure = () => {
    stop()
    done({ _tag: "BodyUnreadable" })
  }
  request.on("data", onData).on("end", onEnd).on("error", onFailure).on("close", onFailure)
  return stop
}

/** A JSON body as UTF-8 text, up to `MAX_BODY_BYTES`. Returns a function that stops listening. */
const collectBody = (request: IncomingMessage, response: ServerResponse, held: Held, done: (result: BodyResult) => void) => {
  const chunks: Array<Buffer> = []
  return readBody(request, response, held, MAX_BODY_BYTES, (chunk) => void chunks.push(chunk), (outcome) =>
    done(outcome === "end" ? Effect.succeed(Buffer.concat(chunks).toString("utf8")) : Effect.fail(outcome)))
}

/** The body, read when the dispatcher asks for it (odd requests it may refuse unread). */
const bodyOnDemand = (request: IncomingMessage, response: ServerResponse, held: Held): BodyResult =>
  Effect.async<string, BodyError>((resume) => Effect.sync(collectBody(request, response, held, resume)))

/**
 * An upload, each chunk handed to `sink` as it arrives and none kept here; past `limitBytes` it is
 * refused at once and the rest discarded as for a JSON body over 1 MiB, so memory never holds more
 * than the limit whatever the client sends.
 */
const streamBody = (
  request: IncomingMessage,
  response: ServerResponse,
  held: Held,
  limitBytes: number,
  sink: (chunk: Uint8Array) => void | Promise<void>
): Effect.Effect<void, BodyError> =>
  Effect.async<void, BodyError>((resume) =>
    Effect.sync(readBody(request, response, held, limitBytes, sink, (outcome) => resume(outcome === "end" ? Effect.void : Effect.fail(outcome))))
  )

/**
 * A Node request as the dispatcher sees it. A class, so that `stream`, which only uploads use, is
 * a method on its prototype rather than a closure made for every request.
 */
class NodeRequest implements MzkRequest {
  readonly method: string
  readonly url: string
  readonly headers: MzkRequest["headers"]
  readonly remoteAddress: string | undefined
  constructor(
    private readonly incoming: IncomingMessage,
    private readonly response: ServerResponse,
    private readonly held: Held,
    readonly body: BodyResult,
    url: string
  ) {
    this.method = incoming.method ?? "GET"
    this.url = url
    this.headers = incoming.headers
    this.remoteAddress = incoming.socket.remoteAddress
  }
  stream(limitBytes: number, sink: (chunk: Uint8Array) => void | Promise<void>) {
    return streamBody(this.incoming, this.response, this.held, limitBytes, sink)
  }
}

/**
 * A Node request whose body another framework read before handing it on (Express's
 * `express.json()`, Fastify's parsers): the stream has ended, so the body is what the framework
 * kept of it (see `consumedBody`).
 */
const consumedRequest = (incoming: IncomingMessage, url: string): MzkRequest => {
  const kept = consumedBody(incoming as IncomingMessage & { readonly rawBody?: unknown; readonly body?: unknown })
  return {
    method: incoming.method ?? "GET",
    url,
    headers: incoming.headers,
    body: consumedText(kept),
    stream: consumedStream(kept),
    remoteAddress: incoming.socket.remoteAddress
  }
}

/**
 * The URL to route a request that came through another framework by (see `mountedPath`), or
 * `undefined` for a request that is not mzk's where the framework can pass it on (`next`).
 */
const mountedUrl = (request: IncomingMessage & { readonly originalUrl?: unknown }, canPassOn: boolean): string | undefined => {
  const url = request.url ?? "/"
  if (routesAsIs(url)) return url
  // Express strips the mount point from `url` and keeps the whole path in `originalUrl`, so it
  // never needs a stripped part of /api/v1 put back, and what has no /api/v1 is the app's.
  const whole = typeof request.originalUrl === "string" ? request.originalUrl : url
  return canPassOn ? apiPath(whole) : mountedPath(whole)
}

export interface NodeListenerOptions {
  /**
   * Inside another framework's app (Express, Fastify, a server of the embedder's own) rather than
   * on mzk's own server: requests are routed by the path under any mount point (`originalUrl`
   * where Express set it), and a body the framework already read is taken from `req.rawBody` or
   * `req.body` instead of the stream. Off for `mzk serve`, whose paths are mzk's alone.
   */
  readonly mounted?: boolean
}

/** A listener for `node:http` (`(req, res)`) and, mounted, for Express (`(req, res, next)`). */
export type NodeListener = (request: IncomingMessage, response: ServerResponse, next?: (error?: unknown) => void) => void

/** Runs a streamed body's stream as Node's readable, on the listener's runtime. */
type Readables = (stream: StreamedBody["stream"]) => Readable

const write = (response: ServerResponse, answer: MzkResponse, held: Held, readables: Readables) => {
  const waiting = held.get(response)
  if (waiting !== undefined) return void waiting.push(() => write(response, answer, held, readables))
  if (response.headersSent || response.destroyed) return
  if (answer.body === undefined) {
    response.writeHead(answer.status, answer.headers).end()
    return
  }
  if (isStreamedBody(answer.body)) {
    response.writeHead(answer.status, { ...answer.headers, "content-length": String(answer.body.length) })
    // A HEAD gets the head only: the file is not read.
    if (response.req.method === "HEAD") return void response.end()
    // Pulled as the socket drains; a client that goes away destroys the readable, which ends the
    // stream's fiber. A read that fails midway cuts the response short of its Content-Length, so
    // the client sees it incomplete rather than a file that merely ends early.
    pipeline(readables(answer.body.stream), response, () => undefined)
    return
  }
  // writeHead fixes the headers, so without a length Node would send the body chunked. The body
  // stays a string: Node then sends head and body in one write rather than a writev of two chunks.
  const length = String(Buffer.byteLength(answer.body, "utf8"))
  response.writeHead(answer.status, { ...answer.headers, "content-length": length }).end(answer.body, "utf8")
}

/**
 * A Node `(req, res)` listener over `dispatch`, each request a fiber of `runtime` (so the services
 * and references an embedder provided are the ones handlers see).
 *
 * A JSON body within the limit is read before the fiber starts, so the request then runs in one
 * step: waiting for the body inside the fiber suspended it and resumed it through Effect's
 * scheduler, which cost CPU and, under load, left requests waiting behind whole batches of others
 * (`POST /api/v1/proofs` p99 130 ms at 32 connections, measured). Other bodies are read only if
 * the dispatcher gets that far, so a request it refuses (413, 415) is answered without buffering.
 */
export const toNodeListener = <R>(runtime: Runtime.Runtime<R>, dispatch: Dispatch, options: NodeListenerOptions = {}): NodeListener => {
  const runFork = Runtime.runFork(runtime)
  const held: Held = new WeakMap()
  const readables: Readables = (stream) =>
    Readable.from(Stream.toAsyncIterableRuntime(
      Stream.tapErrorCause(stream, (cause) => Effect.logError("A streamed response failed midway", cause)),
      runtime
    ))
  const start = (response: ServerResponse, request: MzkRequest) => {
    const fiber = runFork(dispatch(request))
    fiber.addObserver((exit) => {
      // `dispatch` answers every failure itself; an exit that is not a success means a defect in mzk.
      if (Exit.isSuccess(exit)) write(response, exit.value, held, readables)
      else response.destroy()
    })
  }
  const serve = (request: IncomingMessage, response: ServerResponse, url: string) => {
    if (sendsAcceptableBody(request)) collectBody(request, response, held, (body) => start(response, new NodeRequest(request, response, held, body, url)))
    else start(response, new NodeRequest(request, response, held, bodyOnDemand(request, response, held), url))
  }
  if (options.mounted !== true) return (request, response) => serve(request, response, request.url ?? "/")
  return (request, response, next) => {
    const url = mountedUrl(request, typeof next === "function")
    // Express mounted at the root hands mzk every request: the app's own go on to its next routes.
    if (url === undefined) return next!()
    // An ended stream was read by the framework (a request nobody read has not ended yet, even
    // without a body), so waiting for it would wait for ever.
    if (request.readableEnded) start(response, consumedRequest(request, url))
    else serve(request, response, url)
  }
}

const nodeListener = (options: NodeListenerOptions): Effect.Effect<NodeListener, never, HttpServices> =>
  Effect.gen(function*() {
    const dispatch = yield* makeDispatcher
    const runtime = yield* Effect.runtime<never>()
    return toNodeListener(runtime, dispatch, options)
  })

/**
 * mzk as a Node `(req, res)` listener whose requests run on the current runtime: for a `node:http`
 * server of your own (see `createMzkNodeServer` for the one `mzk serve` listens with, which also
 * answers protocol errors).
 */
export const makeNodeListener = nodeListener({})

/** `makeNodeListener` for mounting inside another framework's app (see `NodeListenerOptions.mounted`). */
export const makeMountedNodeListener = nodeListener({ mounted: true })

/**
 * The envelope for what never reaches the dispatcher, answered on the socket itself: a 400 (or 408)
 * `invalid_request` with a fresh `Request-Id`, encoded from MzkApi's error schema like every other error.
 */
const makeProtocolAnswers = () => {
  const encode = makeErrorEncoder(MzkApi)
  const nextRequestId = makeRequestIds()
  return (message: string) => {
    // Outside any fiber: the default Clock, as a request's fiber would have.
    const requestId = Effect.runSync(Effect.clockWith((clock) => Effect.succeed(nextRequestId(clock))))
    return { requestId, body: encode(new InvalidRequest({ message }), requestId)!.body! }
  }
}

/**
 * The `http.Server` that `mzk serve` listens with. Requests Node's parser rejects (a malformed
 * request line or header, a bad Content-Length, both Content-Length and Transfer-Encoding) never
 * reach the API; Node would answer them itself with an empty 400, so they get the error envelope
 * and a `Request-Id` like every other error. An `Expect` other than `100-continue` gets Node's own
 * bodiless 417; RFC 9110 lets a server refuse it with a 4xx of its choice, and mzk answers 400
 * `invalid_request` in the envelope, as for any other header it cannot honour, and closes the
 * connection (the body, if any, is never read). mzk does not route by host, so a request without a
 * Host header is served like any other instead of getting Node's empty 400.
 */
export const createMzkNodeServer = (listener: (request: IncomingMessage, response: ServerResponse) => void): Server => {
  const answer = makeProtocolAnswers()
  const answerClientError = (error: Error & { code?: string }, socket: Duplex) => {
    if (error.code === "ECONNRESET" || !socket.writable) {
      socket.destroy()
      return
    }
    // A client too slow to send its headers gets Node's own status for that, 408, in the envelope.
    const [status, message] = error.code === "ERR_HTTP_REQUEST_TIMEOUT"
      ? ["408 Request Timeout", "The request did not arrive in time"]
      : ["400 Bad Request", "The request is not valid HTTP/1.1"]
    const { body, requestId } = answer(message)
    socket.end(
      `HTTP/1.1 ${status}\r\n` +
        "content-type: application/json\r\n" +
        `content-length: ${Buffer.byteLength(body)}\r\n` +
        `request-id: ${requestId}\r\n` +
        "connection: close\r\n\r\n" +
        body
    )
  }
  const refuseExpectation = (request: IncomingMessage, response: ServerResponse) => {
    const { body, requestId } = answer("Only Expect: 100-continue is supported")
    response.shouldKeepAlive = false
    response.writeHead(400, { "content-type": "application/json", "content-length": Buffer.byteLength(body), "request-id": requestId }).end(body)
    request.resume()
  }
  const server = createServer({ requireHostHeader: false }, listener)
  server.on("clientError", answerClientError)
  server.on("checkExpectation", refuseExpectation)
  return server
}
