import { spawn } from "node:child_process"
import { request } from "node:http"
import { createServer } from "node:net"
import { fileURLToPath } from "node:url"

export const root = fileURLToPath(new URL("../../..", import.meta.url))

/** A loopback port nothing listens on right now. */
export const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })

/** `mzk serve` as its own OS process, as an operator runs it. */
export const serveProcess = (database: string, port: number, extra: ReadonlyArray<string> = []) =>
  spawn(process.execPath, ["--import", "tsx", "packages/server/src/cli.ts", "serve", "--port", String(port), "--database", database, ...extra], {
    cwd: root,
    stdio: "ignore"
  })

export interface Answer {
  readonly status: number
  readonly headers: Record<string, string | Array<string> | undefined>
  readonly body: string
}

/**
 * One request over its own socket. `chunkedBytes` streams a body of that size with no
 * Content-Length, in 64 KiB writes with backpressure.
 */
export const send = (
  port: number,
  method: string,
  path: string,
  headers: Record<string, string>,
  options: { readonly body?: string; readonly chunkedBytes?: number } = {}
) =>
  new Promise<Answer>((resolve, reject) => {
    let answered = false
    const outgoing = request({ host: "127.0.0.1", port, method, path, headers, agent: false }, (response) => {
      answered = true
      let body = ""
      response.setEncoding("utf8")
      response.on("data", (chunk: string) => {
        body += chunk
      })
      response.on("end", () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }))
    })
    // Once answered, the server may close while the rest of an upload is still in flight.
    outgoing.on("error", (error) => {
      if (!answered) reject(error)
    })
    const total = options.chunkedBytes
    if (total === undefined) return void outgoing.end(options.body)
    const chunk = Buffer.alloc(64 * 1024, "1")
    let sent = 0
    const pump = () => {
      while (sent < total) {
        sent += chunk.length
        if (!outgoing.write(chunk)) return void outgoing.once("drain", pump)
      }
      outgoing.end()
    }
    pump()
  })
