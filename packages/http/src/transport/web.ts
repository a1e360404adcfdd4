import { Effect, type Layer, ManagedRuntime } from "effect"
import { type HttpServices, makeDispatcher } from "../serve/dispatch.js"
import type { BodyError } from "../wire/message.js"
import { MAX_BODY_BYTES } from "../wire/precheck.js"

const TOO_LARGE: BodyError = { _tag: "BodyTooLarge" }

/** A web Request's body as text, refused once it passes `MAX_BODY_BYTES` (a web body need not declare its length). */
const webBody = (request: Request): Effect.Effect<string, BodyError> =>
  Effect.tryPromise({
    try: async () => {
      if (request.body === null) return ""
      const reader = request.body.getReader()
      const chunks: Array<Uint8Array> = []
      let size = 0
      for (;;) {
        const { done, value } = await reader.read()
        if (done) break
        size += value.byteLength
        if (size > MAX_BODY_BYTES) {
          await reader.cancel()
          throw TOO_LARGE
        }
        chunks.push(value)
      }
      const all = new Uint8Array(size)
      let at = 0
      for (const chunk of chunks) {
        all.set(chunk, at)
        at += chunk.byteLength
      }
      return new TextDecoder().decode(all)
    },
    catch: (error): BodyError => (error === TOO_LARGE ? TOO_LARGE : { _tag: "BodyUnreadable" })
  })

/** An upload, each chunk handed to `sink` as it arrives, the stream cancelled once it passes `limitBytes`. */
const webStream = (request: Request) => (limitBytes: number, sink: (chunk: Uint8Array) => void): Effect.Effect<void, BodyError> =>
  Effect.tryPromise({
    try: async () => {
      if (request.body === null) return
      const reader = request.body.getReader()
      let size = 0
      for (;;) {
        const { done, value } = await reader.read()
        if (done) return
        size += value.byteLength
        if (size > limitBytes) {
          await reader.cancel()
          throw TOO_LARGE
        }
        sink(value)
      }
    },
    catch: (error): BodyError => (error === TOO_LARGE ? TOO_LARGE : { _tag: "BodyUnreadable" })
  })

/**
 * A fetch-style handler, `(Request) => Promise<Response>`, for embedding in any framework that
 * speaks web requests. `core` supplies the core services (see `@mzk/server` for the default wiring).
 */
export const makeWebHandler = <E>(core: Layer.Layer<HttpServices, E>) => {
  const runtime = ManagedRuntime.make(core)
  let dispatcher: ReturnType<typeof runtime.runPromise<Effect.Effect.Success<typeof makeDispatcher>, never>> | undefined
  const handler = async (request: Request): Promise<Response> => {
    dispatcher ??= runtime.runPromise(makeDispatcher)
    const dispatch = await dispatcher
    const url = new URL(request.url)
    const answer = await runtime.runPromise(dispatch({
      method: request.method,
      url: url.pathname + url.search,
      headers: Object.fromEntries(request.headers),
      body: webBody(request),
      stream: webStream(request)
    }))
    return new Response(request.method === "HEAD" ? null : answer.body ?? null, { status: answer.status, headers: answer.headers })
  }
  return { handler, dispose: () => runtime.dispose() }
}
