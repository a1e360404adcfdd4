import { Effect, Exit, Runtime } from "effect"
import type { IncomingMessage, ServerResponse } from "node:http"
import type { Dispatch } from "./dispatcher.js"
import { type BodyError, MAX_BODY_BYTES, type MzkResponse, sendsAcceptableBody } from "./requestPipeline.js"

/** How much of an over-long body is read and thrown away so its client can read the 413. */
const DISCARD_LIMIT_BYTES = 16 * 1024 * 1024

/** Responses held back until the rest of their request's body has been read and discarded. */
const discarding = new WeakMap<ServerResponse, Array<() => void>>()

/**
 * The rest of a body past the cap is read and discarded (up to a bound) rather than the socket
 * reset, so a chunked upload over 1 MiB, which has no Content-Length to refuse early, still gets
 * its 413. The answer waits until the upload has ended (or passed the bound), since closing the
 * connection while a client still writes resets it, and a client that reads only once it has sent
 * everything (Python's http.client, node's http) then loses the answer. The connection closes
 * after the response.
 */
const discardRest = (request: IncomingMessage, response: ServerResponse) => {
  response.shouldKeepAlive = false
  const waiting: Array<() => void> = []
  discarding.set(response, waiting)
  let discarded = 0
  const onData = (chunk: Buffer) => {
    discarded += chunk.length
    // Past the bound: answer now and let the connection close on whatever is still coming.
    if (discarded > DISCARD_LIMIT_BYTES) release()
  }
  const release = () => {
    request.off("data", onData).off("end", release).off("close", release)
    discarding.delete(response)
    for (const write of waiting.splice(0)) write()
  }
  request.on("data", onData).on("end", release).on("close", release)
  request.resume()
}

type BodyResult = Effect.Effect<string, BodyError>

/**
 * Reads the body of a Node request as UTF-8 text, refused once it passes `MAX_BODY_BYTES`, and
 * hands over the outcome once. Returns a function that stops listening.
 */
const collectBody = (request: IncomingMessage, response: ServerResponse, done: (result: BodyResult) => void) => {
  const chunks: Array<Buffer> = []
  let size = 0
  const stop = () => {
    request.off("data", onData)
    request.off("end", onEnd)
    request.off("error", onFailure)
    request.off("close", onFailure)
  }
  const onData = (chunk: Buffer) => {
    size += chunk.length
    if (size <= MAX_BODY_BYTES) return void chunks.push(chunk)
    stop()
    discardRest(request, response)
    done(Effect.fail({ _tag: "BodyTooLarge" }))
  }
  const onEnd = () => {
    stop()
    done(Effect.succeed(Buffer.concat(chunks).toString("utf8")))
  }
  const onFailure = () => {
    stop()
    done(Effect.fail({ _tag: "BodyUnreadable" }))
  }
  request.on("data", onData).on("end", onEnd).on("error", onFailure).on("close", onFailure)
  return stop
}

/** The body, read when the dispatcher asks for it (odd requests it may refuse unread). */
const bodyOnDemand = (request: IncomingMessage, response: ServerResponse): BodyResult =>
  Effect.async<string, BodyError>((resume) => Effect.sync(collectBody(request, response, resume)))

const write = (response: ServerResponse, answer: MzkResponse) => {
  const held = discarding.get(response)
  if (held !== undefined) return void held.push(() => write(response, answer))
  if (response.headersSent || response.destroyed) return
  if (answer.body === undefined) {
    response.writeHead(answer.status, answer.headers).end()
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
export const toNodeListener = <R>(runtime: Runtime.Runtime<R>, dispatch: Dispatch) => {
  const runFork = Runtime.runFork(runtime)
  const start = (request: IncomingMessage, response: ServerResponse, body: BodyResult) => {
    const fiber = runFork(dispatch({ method: request.method ?? "GET", url: request.url ?? "/", headers: request.headers, body }))
    fiber.addObserver((exit) => {
      // `dispatch` answers every failure itself; an exit that is not a success means a defect in mzk.
      if (Exit.isSuccess(exit)) write(response, exit.value)
      else response.destroy()
    })
  }
  return (request: IncomingMessage, response: ServerResponse): void => {
    if (sendsAcceptableBody(request)) collectBody(request, response, (body) => start(request, response, body))
    else start(request, response, bodyOnDemand(request, response))
  }
}
