import { Accounts, ApiKeys, type AccountId, type SessionAuthenticator } from "@mzk/core"
import { makeWebHandler } from "@mzk/http"
import { testCore } from "@mzk/testkit"
import { Effect, Layer, ManagedRuntime, Redacted } from "effect"

export interface Reply {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  readonly json: any
}

type Core = Layer.Layer.Success<ReturnType<typeof testCore>>

/**
 * The HTTP surface over one running core, in process (fetch-style handler, no socket), plus the
 * core's services for arranging state.
 */
export const harnessOver = async (runtime: ManagedRuntime.ManagedRuntime<Core, never>) => {
  const context = (await runtime.runtime()).context
  const { handler, dispose } = makeWebHandler(Layer.succeedContext(context))

  const run = <A, E>(effect: Effect.Effect<A, E, Core>) => runtime.runPromise(effect)

  const newAccount = (name = "Acme") =>
    run(Effect.gen(function*() {
      const account = yield* (yield* Accounts).create({ name })
      const created = yield* (yield* ApiKeys).create(account.id, { name: "bootstrap" })
      return { account: account.id as AccountId, key: Redacted.value(created.secret) }
    }))

  const call = async (
    method: string,
    path: string,
    options: { token?: string | undefined; body?: unknown; headers?: Record<string, string> } = {}
  ): Promise<Reply> => {
    const headers: Record<string, string> = { ...options.headers }
    if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`
    let body: string | undefined
    if (options.body !== undefined) {
      body = typeof options.body === "string" ? options.body : JSON.stringify(options.body)
      if (!Object.keys(headers).some((h) => h.toLowerCase() === "content-type")) headers["content-type"] = "application/json"
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

  const close = async () => {
    await dispose()
    await runtime.dispose()
  }

  return { call, run, newAccount, close }
}

/** The harness over the in-memory core; `sessions` plugs in an embedding app's authenticator. */
export const makeHarness = (sessions?: Layer.Layer<SessionAuthenticator>) =>
  harnessOver(ManagedRuntime.make(sessions === undefined ? testCore() : Layer.merge(testCore(), sessions)))
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
