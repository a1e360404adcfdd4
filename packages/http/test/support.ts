import {
  Accounts,
  ApiKeys,
  type AccountId,
  CircuitBuilds,
  CircuitsConfig,
  type CircuitsConfigShape,
  DEFAULT_CIRCUITS_CONFIG,
  DeliveryEngine,
  type SessionAuthenticator,
  WebhookRecoveries
} from "@mzk/core"
import { makeNodeListener } from "@mzk/http"
import { type HttpReply, makeHttpClient, makeScriptedTransport, type Script, type SendOptions, testCore } from "@mzk/testkit"
import { Context, Effect, Layer, ManagedRuntime, Redacted } from "effect"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"

export type Reply = HttpReply

export type Core = Layer.Layer.Success<ReturnType<typeof testCore>>
export type CoreRun = <A, E>(effect: Effect.Effect<A, E, Core>) => Promise<A>

export type CallOptions = Pick<SendOptions, "token" | "body" | "headers" | "chunkedBytes">

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

/**
 * The HTTP surface over one running core, served on a real TCP socket (127.0.0.1, a port the OS
 * picks), plus the core's services for arranging state. `close` stops the client, the server and
 * then the core.
 */
export const harnessOver = async (runtime: ManagedRuntime.ManagedRuntime<Core, never>) => {
  const server = await listen((await runtime.runtime()).context)
  const client = makeHttpClient(server.port)
  const run: CoreRun = (effect) => runtime.runPromise(effect)

  const close = async () => {
    client.close()
    await server.close()
    await runtime.dispose()
  }

  const call = (method: string, path: string, options: CallOptions = {}): Promise<Reply> => client.send(method, path, options)
  return { call, run, newAccount: newAccountIn(run), close, baseUrl: `http://127.0.0.1:${server.port}` }
}

/**
 * The in-memory core with its circuit build loop running (over the fake compiler), as `mzk serve`
 * runs one; with room for many builds at once, so a test's deliberately endless build does not
 * hold up the others'.
 */
export const coreWithBuilds = (core: Layer.Layer<Core> = testCore(), config: Partial<CircuitsConfigShape> = {}) =>
  Layer.provideMerge(
    CircuitBuilds.layer,
    // Provided to the core, whose services read their settings when built, and kept for the dispatcher.
    Layer.provideMerge(core, Layer.succeed(CircuitsConfig, { ...DEFAULT_CIRCUITS_CONFIG, buildConcurrency: 16, ...config }))
  )

/** The harness over the in-memory core; `sessions` plugs in an embedding app's authenticator. */
export const makeHarness = (sessions?: Layer.Layer<SessionAuthenticator>) =>
  harnessOver(ManagedRuntime.make(sessions === undefined ? coreWithBuilds() : Layer.merge(coreWithBuilds(), sessions)))

/**
 * The harness with webhooks delivered too: the delivery engine and the recovery loop run over a
 * scripted transport (what each URL answers; others 200), whose requests the test can read.
 */
export const makeDeliveringHarness = async (script: Script) => {
  const transport = Effect.runSync(makeScriptedTransport(script))
  const loops = Layer.mergeAll(DeliveryEngine.layer, WebhookRecoveries.layer).pipe(Layer.provide(transport.layer))
  const harness = await harnessOver(ManagedRuntime.make(Layer.provideMerge(loops, coreWithBuilds())))
  return { ...harness, sent: (url: string) => Effect.runPromise(transport.requestsTo(url)) }
}

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
