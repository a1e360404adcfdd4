import { Effect, type Layer, ManagedRuntime, Runtime, Stream } from "effect"
import { type Dispatch, type HttpServices, makeDispatcher } from "../serve/dispatch.js"
import { type BodyError, isStreamedBody } from "../wire/message.js"
import { MAX_BODY_BYTES } from "../wire/precheck.js"
import { mountedPath } from "./mount.js"

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
const webStream = (request: Request) => (limitBytes: number, sink: (chunk: Uint8Array) => void | Promise<void>): Effect.Effect<void, BodyError> =>
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
        await sink(value)
      }
    },
    catch: (error): BodyError => (error === TOO_LARGE ? TOO_LARGE : { _tag: "BodyUnreadable" })
  })

/**
 * A fetch-style handler, `(Request) => Promise<Response>`, over `dispatch`, each request run on
 * `runtime`. It is mounted in other frameworks (Hono, a Next.js route handler, anything that
 * speaks web requests), so requests are routed by their path under any mount point (see
 * `mountedPath`); arguments after the request (Hono's env, Next's route context) are ignored.
 */
export const toFetchHandler = <R>(runtime: Runtime.Runtime<R>, dispatch: Dispatch) => {
  const run = Runtime.runPromise(runtime)
  return async (request: Request): Promise<Response> => {
    const url = new URL(request.url)
    const answer = await run(dispatch({
      method: request.method,
      url: mountedPath(url.pathname + url.search),
      headers: Object.fromEntries(request.headers),
      body: webBody(request),
      stream: webStream(request)
    }))
    if (!isStreamedBody(answer.body)) {
      return new Response(request.method === "HEAD" ? null : answer.body ?? null, { status: answer.status, headers: answer.headers })
    }
    // Read as the client takes it; a HEAD gets the head only, and the file is not read.
    const headers = { ...answer.headers, "content-length": String(answer.body.length) }
    const body = request.method === "HEAD" ? null : Stream.toReadableStreamRuntime(answer.body.stream, runtime)
    return new Response(body, { status: answer.status, headers })
  }
}

/** `toFetchHandler` over the current runtime's services. */
export const makeFetchHandler: Effect.Effect<(request: Request) => Promise<Response>, never, HttpServices> = Effect.gen(function*() {
  const dispatch = yield* makeDispatcher
  const runtime = yield* Effect.runtime<never>()
  return toFetchHandler(runtime, dispatch)
})

/**
 * A fetch-style handler with a runtime of its own over `core` (see `createMzk` in `@mzk/server`
 * for the default wiring, which shares one runtime between its Node and fetch handlers).
 */
export const makeWebHandler = <E>(core: Layer.Layer<HttpServices, E>) => {
  const runtime = ManagedRuntime.make(core)
  let handle: Promise<(request: Request) => Promise<Response>> | undefined
  const handler = async (request: Request): Promise<Response> => {
    handle ??= runtime.runPromise(makeFetchHandler)
    return (await handle)(request)
  }
  return { handler, dispose: () => runtime.dispose() }
}
