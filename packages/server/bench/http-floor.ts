/**
 * What the HTTP stack costs with no work behind it (a script, not a test): the same constant
 * `GET /api/v1/keys` answer (one key, as JSON) served five ways, each in its own process, each
 * measured with wrk like bench/http.ts. The rows separate the framework's own cost from mzk's:
 *
 *   node:http                  the floor of Node itself
 *   node:http + Effect fiber   plus one Effect fiber per request (Runtime.runFork)
 *   HttpRouter                 @effect/platform's router and Node server
 *   HttpApi                    an HttpApi endpoint with a typed success schema
 *   HttpApi + bearer           the same behind an HttpApiSecurity bearer middleware
 *
 *   pnpm exec tsx packages/server/bench/http-floor.ts [--duration 10] [--connections 32]
 *
 * `--smoke` (CI's check that the bench runs, scripts/test/benchSmoke.test.ts): one second per server, no warm-up; a server
 * that answers anything but 200 (or nothing) fails the run.
 */
import {
  HttpApi,
  HttpApiBuilder,
  HttpApiEndpoint,
  HttpApiGroup,
  HttpApiMiddleware,
  HttpApiSecurity,
  HttpMiddleware,
  HttpRouter,
  HttpServer,
  HttpServerResponse
} from "@effect/platform"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Context, Effect, Layer, Runtime, Schema } from "effect"
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { createServer } from "node:http"
import { loadavg } from "node:os"
import { parseArgs } from "node:util"

const VARIANTS = ["node:http", "node:http + Effect fiber", "HttpRouter", "HttpApi", "HttpApi + bearer"] as const
type Variant = typeof VARIANTS[number]

const BODY = {
  keys: [{ id: "key_01", name: "default", prefix: "mzk_abcdef", scopes: ["keys:read", "keys:write"], created_at: "2026-11-22T00:00:00.000Z" }],
  total: 1,
  limit: 10
}
const KeyList = Schema.Struct({
  keys: Schema.Array(Schema.Struct({ id: Schema.String, name: Schema.String, prefix: Schema.String, scopes: Schema.Array(Schema.String), created_at: Schema.String })),
  total: Schema.Number,
  limit: Schema.Number
})

class Caller extends Context.Tag("bench/Caller")<Caller, { readonly id: string }>() {}
class Bearer extends HttpApiMiddleware.Tag<Bearer>()("bench/Bearer", { provides: Caller, security: { bearer: HttpApiSecurity.bearer } }) {}

/** The servers: a child process runs one of them on `port` until killed. */
const serveVariant = (variant: Variant, port: number) => {
  if (variant === "node:http" || variant === "node:http + Effect fiber") {
    const json = JSON.stringify(BODY)
    const runFork = Runtime.runFork(Runtime.defaultRuntime)
    createServer((_, response) => {
      if (variant === "node:http") return void response.writeHead(200, { "content-type": "application/json" }).end(json)
      runFork(Effect.sync(() => response.writeHead(200, { "content-type": "application/json" }).end(json)))
    }).listen(port, "127.0.0.1")
    return
  }
  const listen = NodeHttpServer.layer(createServer, { port, host: "127.0.0.1" })
  if (variant === "HttpRouter") {
    const app = HttpRouter.empty.pipe(HttpRouter.get("/api/v1/keys", HttpServerResponse.json(BODY)))
    NodeRuntime.runMain(Layer.launch(HttpServer.serve(app).pipe(HttpMiddleware.withTracerDisabledWhen(() => true), Layer.provide(listen))))
    return
  }
  const group = HttpApiGroup.make("keys").add(HttpApiEndpoint.get("list", "/api/v1/keys").addSuccess(KeyList))
  const api = HttpApi.make("bench").add(variant === "HttpApi + bearer" ? group.middleware(Bearer) : group)
  const handlers = HttpApiBuilder.group(api, "keys", (h) => h.handle("list", () => Effect.succeed(BODY)))
  const live = HttpApiBuilder.api(api).pipe(
    Layer.provide(handlers),
    Layer.provide(Layer.succeed(Bearer, { bearer: () => Effect.succeed({ id: "caller" }) }))
  )
  NodeRuntime.runMain(Layer.launch(HttpApiBuilder.serve().pipe(HttpMiddleware.withTracerDisabledWhen(() => true), Layer.provide(live), Layer.provide(listen))))
}

const { values } = parseArgs({
  options: {
    duration: { type: "string", default: "10" },
    connections: { type: "string", default: "32" },
    variant: { type: "string" },
    port: { type: "string" },
    smoke: { type: "boolean", default: false }
  }
})
const DURATION = values.smoke ? "1" : values.duration

if (values.variant !== undefined) {
  serveVariant(values.variant as Variant, Number(values.port))
} else {
  // Up to a minute: a loaded machine starts tsx slowly.
  const waitFor = async (url: string) => {
    for (let i = 0; i < 1200; i++) {
      try {
        return void await fetch(url, { headers: { authorization: "Bearer x" } })
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    }
    throw new Error(`${url} did not come up`)
  }
  const wrk = (url: string) => {
    const out = execFileSync("wrk", ["-t2", `-c${values.connections}`, `-d${DURATION}s`, "--latency", "-H", "Authorization: Bearer x", url], { encoding: "utf8" })
    const latency = (p: string) => out.match(new RegExp(`^\\s+${p}%\\s+(\\S+)`, "m"))?.[1] ?? "?"
    const rps = Number(out.match(/Requests\/sec:\s+([\d.]+)/)?.[1] ?? 0)
    const failed = Number(out.match(/Non-2xx or 3xx responses:\s+(\d+)/)?.[1] ?? 0)
    if (rps === 0 || failed > 0) throw new Error(`${url}: ${failed} answers other than 2xx, ${rps} req/s:\n${out}`)
    return { rps, p50: latency("50"), p99: latency("99") }
  }
  console.log(`The HTTP stack with no work: wrk -t2 -c${values.connections}, ${DURATION} s ${values.smoke ? "(smoke run: no warm-up)" : "after an equal warm-up"}, loopback; load average ${loadavg().map((l) => l.toFixed(2)).join(" ")}`)
  console.log("server                       req/s   p50        p99")
  for (const [i, variant] of VARIANTS.entries()) {
    const port = 18200 + i
    const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", new URL(import.meta.url).pathname, "--variant", variant, "--port", String(port)], {
      stdio: ["ignore", "ignore", "inherit"]
    })
    try {
      const url = `http://127.0.0.1:${port}/api/v1/keys`
      await waitFor(url)
      if (!values.smoke) wrk(url)
      const r = wrk(url)
      console.log(`${variant.padEnd(26)} ${r.rps.toFixed(0).padStart(8)}   ${r.p50.padEnd(10)} ${r.p99}`)
    } finally {
      child.kill("SIGKILL")
    }
  }
}
