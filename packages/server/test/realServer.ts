import { HttpServer } from "@effect/platform"
import { makeHttpClient } from "@mzk/testkit"
import { Context, Effect, Layer } from "effect"
import { HttpServerLive, type ServeOptions } from "../src/mzk.js"

/**
 * mzk listening on a free loopback port for the test's scope, in this process: its base URL, port,
 * services (`context`), and a client of it (one connection per request, so a test can tell a
 * closed connection from a kept one).
 */
export const startServer = (options: Partial<ServeOptions> = {}) =>
  Effect.gen(function*() {
    const context = yield* Layer.build(HttpServerLive({
      port: 0,
      host: "127.0.0.1",
      database: { kind: "sqlite", filename: ":memory:" },
      // No prover threads or loops unless a test asks for them.
      workers: false,
      ...options
    }))
    const address = Context.get(context, HttpServer.HttpServer).address
    if (address._tag !== "TcpAddress") return yield* Effect.dieMessage("expected a TCP address")
    const baseUrl = `http://127.0.0.1:${address.port}`
    const client = makeHttpClient(baseUrl, { keepAlive: false })
    return { baseUrl, port: address.port, context, client }
  })
