import { Effect, type Scope } from "effect"
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

export interface ReceivedWebhook {
  readonly method: string
  readonly path: string
  readonly headers: IncomingHttpHeaders
  /** The body exactly as it arrived: what a signature is checked against. */
  readonly rawBody: Buffer
  /** Wall-clock arrival time in ms (`Date.now()`): the receiver runs in real time. */
  readonly receivedAtMs: number
}

export interface ReceiverReply {
  readonly status?: number
  readonly body?: string
  readonly headers?: Readonly<Record<string, string>>
  /** Real milliseconds to wait before answering. */
  readonly delayMs?: number
  /** Never answer (the sender's timeout decides). */
  readonly hang?: boolean
}

export interface ReceiverOptions {
  /** Address to listen on; loopback only, so tests never open a port to the network. */
  readonly host?: "127.0.0.1" | "::1"
  /** The reply to the n-th request (1-based). Default: 200 with body `ok`. */
  readonly reply?: (request: ReceivedWebhook, n: number) => ReceiverReply
  /** Called on every request, as it arrives. */
  readonly onRequest?: (request: ReceivedWebhook) => void
  /** Keep received requests in memory (default true; a long benchmark may turn it off). */
  readonly record?: boolean
}

export interface WebhookReceiver {
  /** e.g. `http://127.0.0.1:54321/webhook` */
  readonly url: string
  readonly port: number
  readonly received: Effect.Effect<ReadonlyArray<ReceivedWebhook>>
  /** Waits until at least `count` requests have arrived; returns them all. */
  readonly waitFor: (count: number) => Effect.Effect<ReadonlyArray<ReceivedWebhook>>
}

/**
 * A real HTTP server on loopback, port chosen by the OS, that records raw bodies and headers of
 * the webhook requests it gets: the far end of end-to-end delivery tests. Closed with its scope.
 */
export const startWebhookReceiver = (options: ReceiverOptions = {}): Effect.Effect<WebhookReceiver, never, Scope.Scope> =>
  Effect.gen(function*() {
    const host = options.host ?? "127.0.0.1"
    const received: Array<ReceivedWebhook> = []
    let count = 0
    const waiters = new Set<{ readonly count: number; readonly resume: () => void }>()
    const pending = new Set<ServerResponse>()

    const server = createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (chunk: Buffer) => chunks.push(chunk))
      req.on("end", () => {
        const request: ReceivedWebhook = {
          method: req.method ?? "",
          path: req.url ?? "",
          headers: req.headers,
          rawBody: Buffer.concat(chunks),
          receivedAtMs: Date.now()
        }
        count++
        if (options.record !== false) received.push(request)
        options.onRequest?.(request)
        for (const waiter of waiters) {
          if (count >= waiter.count) {
            waiters.delete(waiter)
            waiter.resume()
          }
        }
        const reply = options.reply?.(request, count) ?? {}
        if (reply.hang === true) {
          pending.add(res)
          return
        }
        const answer = () => {
          res.writeHead(reply.status ?? 200, { "content-type": "text/plain", ...reply.headers })
          res.end(reply.body ?? "ok")
        }
        if (reply.delayMs !== undefined && reply.delayMs > 0) setTimeout(answer, reply.delayMs)
        else answer()
      })
    })

    const port = yield* Effect.acquireRelease(
      Effect.async<number>((resume) => {
        server.listen(0, host, () => resume(Effect.succeed((server.address() as AddressInfo).port)))
      }),
      () =>
        Effect.async<void>((resume) => {
          for (const res of pending) res.destroy()
          server.closeAllConnections()
          server.close(() => resume(Effect.void))
        })
    )
    const hostPart = host === "::1" ? "[::1]" : host

    return {
      url: `http://${hostPart}:${port}/webhook`,
      port,
      received: Effect.sync(() => [...received]),
      waitFor: (wanted) =>
        Effect.async<ReadonlyArray<ReceivedWebhook>>((resume) => {
          const done = () => resume(Effect.sync(() => [...received]))
          if (count >= wanted) return done()
          const waiter = { count: wanted, resume: done }
          waiters.add(waiter)
          return Effect.sync(() => waiters.delete(waiter))
        })
    }
  })
