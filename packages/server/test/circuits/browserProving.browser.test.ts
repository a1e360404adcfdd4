import { expect, it } from "@effect/vitest"
import { Accounts, ApiKeys } from "@mzk/core"
import { Deferred, Effect, Redacted } from "effect"
import { readFileSync } from "node:fs"
import { createServer, type IncomingMessage, request, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { fileURLToPath } from "node:url"
import { describe } from "vitest"
import { chromiumAvailable, openInChromium } from "../chromium.js"
import { startServer } from "../realServer.js"

const PAGE = fileURLToPath(new URL("../../../../examples/browser/prove.html", import.meta.url))
const SNARKJS = fileURLToPath(new URL("../../../proving/node_modules/snarkjs/build/snarkjs.min.js", import.meta.url))

interface Exchange {
  readonly method: string
  readonly path: string
  readonly status: number
  readonly requestBody: string
  readonly responseBody: string
}

/**
 * The page's own web server, as an application would run it: the page and snarkjs from its own
 * files, and `/api/v1/` passed on to mzk on another port (a reverse proxy: the page calls the API
 * on its own origin, so the browser needs no CORS). Every API exchange is reported to `seen`.
 */
const startPageServer = (apiPort: number, seen: (exchange: Exchange) => void) =>
  Effect.acquireRelease(
    Effect.async<{ readonly url: string; readonly close: () => void }>((resume) => {
      const files: Record<string, readonly [string, string]> = {
        "/prove.html": [PAGE, "text/html; charset=utf-8"],
        "/snarkjs.min.js": [SNARKJS, "text/javascript"]
      }
      const proxy = (incoming: IncomingMessage, outgoing: ServerResponse) => {
        const sent: Array<Buffer> = []
        incoming.on("data", (chunk: Buffer) => sent.push(chunk))
        incoming.on("end", () => {
          const forward = request({ host: "127.0.0.1", port: apiPort, method: incoming.method, path: incoming.url, headers: incoming.headers }, (answer) => {
            outgoing.writeHead(answer.statusCode ?? 502, answer.headers)
            const received: Array<Buffer> = []
            answer.on("data", (chunk: Buffer) => {
              // Bodies of the files are not kept, only of the JSON answers.
              if (!String(answer.headers["content-type"]).startsWith("application/octet-stream") && answer.headers["content-type"] !== "application/wasm") received.push(chunk)
              outgoing.write(chunk)
            })
            answer.on("end", () => {
              outgoing.end()
              seen({
                method: incoming.method ?? "GET",
                path: incoming.url ?? "",
                status: answer.statusCode ?? 0,
                requestBody: Buffer.concat(sent).toString("utf8"),
                responseBody: Buffer.concat(received).toString("utf8")
              })
            })
          })
          forward.on("error", () => outgoing.destroy())
          forward.end(Buffer.concat(sent))
        })
      }
      const server = createServer((incoming, outgoing) => {
        const path = new URL(incoming.url ?? "/", "http://page").pathname
        if (path.startsWith("/api/v1/")) return proxy(incoming, outgoing)
        const file = files[path]
        if (file === undefined) return void outgoing.writeHead(404).end()
        outgoing.writeHead(200, { "content-type": file[1] }).end(readFileSync(file[0]))
      })
      server.listen(0, "127.0.0.1", () =>
        resume(Effect.succeed({
          url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
          close: () => server.close()
        })))
    }),
    ({ close }) => Effect.sync(close)
  )

;(chromiumAvailable("the browser proving example's test") ? describe : describe.skip)("examples/browser/prove.html in headless Chromium", () => {
  it.scopedLive("downloads wasm and zkey from mzk, proves with snarkjs in the page, and mzk verifies the proof", () =>
    Effect.gen(function*() {
      const { context, port } = yield* startServer()
      // The key the example asks for: downloads and verifications, nothing else.
      const key = yield* Effect.gen(function*() {
        const account = yield* (yield* Accounts).create({ name: "Browser" })
        const created = yield* (yield* ApiKeys).create(account.id, { name: "page", scopes: ["circuits:read", "proofs:verify"] })
        return Redacted.value(created.secret)
      }).pipe(Effect.provide(context))

      const exchanges: Array<Exchange> = []
      const verified = yield* Deferred.make<Exchange>()
      const page = yield* startPageServer(port, (exchange) => {
        exchanges.push(exchange)
        if (exchange.path === "/api/v1/verifications") Deferred.unsafeDone(verified, Effect.succeed(exchange))
      })
      const fragment = new URLSearchParams({ key, circuit: "multiplier", inputs: JSON.stringify({ a: 3, b: 11 }) })
      yield* openInChromium(`${page.url}/prove.html#${fragment}`)

      const verification = yield* Deferred.await(verified).pipe(
        Effect.timeoutFail({ duration: "90 seconds", onTimeout: () => new Error(`no verification; the page's API calls: ${JSON.stringify(exchanges)}`) })
      )
      // The files came from mzk, whole, before the proof.
      expect(exchanges.filter((e) => e.path.includes("/artifacts/")).map((e) => [e.path, e.status]).sort()).toEqual([
        ["/api/v1/circuits/multiplier/artifacts/wasm", 200],
        ["/api/v1/circuits/multiplier/artifacts/zkey", 200]
      ])
      // The proof snarkjs made in the page, of 3 × 11, and mzk's answer: it holds.
      const sent = JSON.parse(verification.requestBody) as { public_signals: ReadonlyArray<string>; proof: { protocol: string } }
      expect(sent).toMatchObject({ circuit: "multiplier", proving_system: "groth16", public_signals: ["33"], proof: { protocol: "groth16" } })
      expect(verification.status, verification.responseBody).toBe(200)
      expect(JSON.parse(verification.responseBody)).toMatchObject({ valid: true, proving_system: "groth16" })
    }), 120_000)
})
