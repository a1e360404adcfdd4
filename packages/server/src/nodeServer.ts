import { errorBody, makeRequestId } from "@mzk/http"
import { Effect } from "effect"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { Duplex } from "node:stream"

/**
 * Requests Node's parser rejects (a malformed request line or header, a bad Content-Length, both
 * Content-Length and Transfer-Encoding) never reach the API: Node answers them itself, with an
 * empty 400. Answer them with the error envelope and a Request-Id like every other error.
 */
const answerClientError = (error: Error & { code?: string }, socket: Duplex) => {
  if (error.code === "ECONNRESET" || !socket.writable) {
    socket.destroy()
    return
  }
  const requestId = Effect.runSync(makeRequestId)
  // A client too slow to send its headers gets Node's own status for that, 408, in the envelope.
  const [status, message] = error.code === "ERR_HTTP_REQUEST_TIMEOUT"
    ? ["408 Request Timeout", "The request did not arrive in time"]
    : ["400 Bad Request", "The request is not valid HTTP/1.1"]
  const body = JSON.stringify(errorBody("InvalidRequest", message, requestId))
  socket.end(
    `HTTP/1.1 ${status}\r\n` +
      "content-type: application/json\r\n" +
      `content-length: ${Buffer.byteLength(body)}\r\n` +
      `request-id: ${requestId}\r\n` +
      "connection: close\r\n\r\n" +
      body
  )
}

/**
 * An `Expect` other than `100-continue` gets Node's own bodiless 417. RFC 9110 lets a server refuse
 * it with a 4xx of its choice; mzk answers 400 `invalid_request` in the envelope, as for any other
 * header it cannot honour, and closes the connection (the body, if any, is never read).
 */
const refuseExpectation = (request: IncomingMessage, response: ServerResponse) => {
  const requestId = Effect.runSync(makeRequestId)
  const body = JSON.stringify(errorBody("InvalidRequest", "Only Expect: 100-continue is supported", requestId))
  response.shouldKeepAlive = false
  response.writeHead(400, { "content-type": "application/json", "content-length": Buffer.byteLength(body), "request-id": requestId }).end(body)
  request.resume()
}

/**
 * The `http.Server` that `mzk serve` listens with. mzk does not route by host, so a request without
 * a Host header is served like any other instead of getting Node's empty 400.
 */
export const createMzkNodeServer = (listener: (request: IncomingMessage, response: ServerResponse) => void): Server => {
  const server = createServer({ requireHostHeader: false }, listener)
  server.on("clientError", answerClientError)
  server.on("checkExpectation", refuseExpectation)
  return server
}
