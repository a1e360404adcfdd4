import { Accounts, ApiKeys, DeliveryEngine, ProofLoops, type AccountId } from "@mzk/core"
import { makeWebHandler } from "@mzk/http"
import { FakeProver, makeScriptedTransport, type Script, testCore } from "@mzk/testkit"
import { Effect, Layer, ManagedRuntime, Redacted } from "effect"
import type { Reply } from "./support.js"

/**
 * Like `makeHarness`, but with the background loops running on the live clock: the proof worker
 * over the fake prover (10 ms a proof) and the delivery engine over a scripted transport (no
 * network; URLs the script does not name answer 200). Proofs complete and events are delivered.
 */
export const makeLiveHarness = async (script: Script = {}) => {
  const scripted = await Effect.runPromise(makeScriptedTransport(script))
  const base = testCore(undefined, { prover: FakeProver({ duration: "10 millis" }) })
  const loops = Layer.mergeAll(DeliveryEngine.layer.pipe(Layer.provide(scripted.layer)), ProofLoops)
  const runtime = ManagedRuntime.make(loops.pipe(Layer.provideMerge(base)))
  const context = (await runtime.runtime()).context
  const { handler, dispose } = makeWebHandler(Layer.succeedContext(context))

  const newAccount = (name = "Acme") =>
    runtime.runPromise(Effect.gen(function*() {
      const account = yield* (yield* Accounts).create({ name })
      const created = yield* (yield* ApiKeys).create(account.id, { name: "bootstrap" })
      return { account: account.id as AccountId, key: Redacted.value(created.secret) }
    }))

  const call = async (method: string, path: string, options: { token?: string; body?: unknown } = {}): Promise<Reply> => {
    const headers: Record<string, string> = {}
    if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`
    let body: string | undefined
    if (options.body !== undefined) {
      body = JSON.stringify(options.body)
      headers["content-type"] = "application/json"
    }
    const response = await handler(new Request(`http://mzk.test${path}`, { method, headers, ...(body === undefined ? {} : { body }) }))
    const text = await response.text()
    let json: unknown
    try {
      json = text === "" ? undefined : JSON.parse(text)
    } catch {
      json = undefined
    }
    return { status: response.status, headers: response.headers, text, json }
  }

  /** Polls `probe` until it returns a value (not undefined), or fails after `timeoutMs`. */
  const eventually = async <A>(probe: () => Promise<A | undefined>, timeoutMs = 5_000): Promise<A> => {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const value = await probe()
      if (value !== undefined) return value
      if (Date.now() > deadline) throw new Error("condition not met in time")
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }

  const close = async () => {
    await dispose()
    await runtime.dispose()
  }

  return { call, newAccount, eventually, requests: () => Effect.runPromise(scripted.requests), close }
}
