import { HttpServer } from "@effect/platform"
import { Context, Effect, Layer } from "effect"
import { MzkServer, type ServeOptions } from "../src/mzk.js"

/** mzk listening on a free loopback port for the test's scope; resolves to its base URL. */
export const startServer = (options: Partial<ServeOptions> = {}) =>
  Effect.gen(function*() {
    const context = yield* Layer.build(MzkServer({
      port: 0,
      host: "127.0.0.1",
      database: { kind: "sqlite", filename: ":memory:" },
      // No prover threads or loops unless a test asks for them.
      workers: false,
      ...options
    }))
    const address = Context.get(context, HttpServer.HttpServer).address
    if (address._tag !== "TcpAddress") return yield* Effect.dieMessage("expected a TCP address")
    return { baseUrl: `http://127.0.0.1:${address.port}`, context }
  })
