import { eventually, makeHttpClient } from "@mzk/testkit"
import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { describe } from "vitest"
import { freePort, mzkProcess, serveProcess, tempSqlite } from "../processes.js"

describe("the operational endpoints from the command line", () => {
  it.scopedLive("mzk worker --metrics-port serves /healthz, /readyz and /metrics (behind --metrics-token) and nothing else", () =>
    Effect.gen(function*() {
      const { database } = yield* tempSqlite("worker-ops")
      const port = yield* Effect.promise(freePort)
      const worker = yield* mzkProcess(["worker", "--database", database, "--metrics-port", String(port), "--metrics-token", "scrape-token"])
      const client = makeHttpClient(`http://127.0.0.1:${port}`, { keepAlive: false, timeoutMs: 2_000 })
      yield* Effect.promise(() => eventually(() => client.send("GET", "/healthz").then((r) => r.status === 200), 60_000, 100))
      expect((yield* Effect.promise(() => client.send("GET", "/readyz"))).json.status).toBe("ready")
      expect((yield* Effect.promise(() => client.send("GET", "/metrics"))).status).toBe(401)
      const metrics = yield* Effect.promise(() => client.send("GET", "/metrics", { token: "scrape-token" }))
      expect(metrics.text).toContain("mzk_proof_queue_depth")
      expect((yield* Effect.promise(() => client.send("GET", "/api/v1/keys"))).status).toBe(404)
      expect(worker.output()).not.toContain("scrape-token")
    }), 120_000)

  it.scopedLive("mzk serve --metrics-token guards /metrics; --access-log writes a line per request, without the query", () =>
    Effect.gen(function*() {
      const { database } = yield* tempSqlite("serve-ops")
      const server = yield* serveProcess(database, { args: ["--no-workers", "--metrics-token", "scrape-token", "--access-log"] })
      const client = server.client()
      expect((yield* Effect.promise(() => client.send("GET", "/metrics"))).status).toBe(401)
      expect((yield* Effect.promise(() => client.send("GET", "/metrics", { token: "scrape-token" }))).status).toBe(200)
      yield* Effect.promise(() => client.send("GET", "/api/v1/circuits?secret=in-the-query"))
      server.child.kill("SIGTERM")
      yield* Effect.promise(() => server.exited)
      const lines = server.output().trim().split("\n").map((line) => JSON.parse(line) as { message: string; annotations: Record<string, unknown> })
      const access = lines.filter((l) => l.annotations.event === "http.request")
      expect(access.find((l) => l.annotations.route === "/api/v1/circuits")?.annotations).toMatchObject({
        method: "GET", path: "/api/v1/circuits", status: 401
      })
      expect(server.output()).not.toContain("in-the-query")
      expect(server.output()).not.toContain("scrape-token")
    }), 120_000)
})
