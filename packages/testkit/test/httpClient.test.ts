import { describe, expect, it } from "vitest"
import { createServer, type Socket } from "node:net"
import { makeHttpClient } from "../src/httpClient.js"

/**
 * A loopback HTTP/1.1 server of raw sockets: it answers requests with keep-alive, and resets a
 * connection instead of answering when `reset(connection, request)` says so (as a server does that
 * closed a socket as idle just as the client reused it).
 */
const resettingServer = async (reset: (connection: number, request: number) => boolean) => {
  let connections = 0
  const server = createServer((socket: Socket) => {
    const connection = ++connections
    let requests = 0
    let buffered = ""
    socket.on("data", (chunk) => {
      buffered += chunk.toString("latin1")
      while (buffered.includes("\r\n\r\n")) {
        buffered = buffered.slice(buffered.indexOf("\r\n\r\n") + 4)
        const request = ++requests
        if (reset(connection, request)) return void socket.resetAndDestroy()
        const body = JSON.stringify({ connection, request })
        socket.write(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: keep-alive\r\n\r\n${body}`)
      }
    })
    socket.on("error", () => undefined)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as { port: number }).port
  return { port, connections: () => connections, close: () => new Promise<void>((resolve) => server.close(() => resolve())) }
}

describe("the test suites' HTTP client", () => {
  it("sends a request again on a fresh socket when a reused kept-alive socket is reset before any answer", async () => {
    // The second request on the first connection is reset, as by a server that just closed it as idle.
    const server = await resettingServer((connection, request) => connection === 1 && request === 2)
    const client = makeHttpClient(server.port)
    try {
      expect((await client.send("GET", "/a")).json).toEqual({ connection: 1, request: 1 })
      expect((await client.send("POST", "/b", { body: { n: 1 } })).json).toEqual({ connection: 2, request: 1 })
      expect(server.connections()).toBe(2)
    } finally {
      client.close()
      await server.close()
    }
  })

  it("fails a request whose fresh socket is reset: only a reused socket's reset is sent again", async () => {
    const server = await resettingServer(() => true)
    const client = makeHttpClient(server.port)
    try {
      await expect(client.send("GET", "/a")).rejects.toMatchObject({ code: "ECONNRESET" })
      expect(server.connections()).toBe(1)
    } finally {
      client.close()
      await server.close()
    }
  })
})
