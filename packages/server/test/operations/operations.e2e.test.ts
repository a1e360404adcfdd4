import { openSqlite } from "@mzk/adapters-sqlite"
import { adminUrl, describePostgres, freshDatabaseUrl } from "@mzk/adapters-postgres/testing"
import { Accounts, ApiKeys } from "@mzk/core"
import { eventually, makeHttpClient, startWebhookReceiver } from "@mzk/testkit"
import { expect, it } from "@effect/vitest"
import { HttpServer } from "@effect/platform"
import { Context, Effect, HashMap, Layer, Logger, Redacted } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import { describe } from "vitest"
import { WorkerProcessLive } from "../../src/mzk.js"
import { startServer } from "../realServer.js"

/** The value of one series of a Prometheus text exposition (0 when absent: a counter never moved). */
const sample = (exposition: string, series: string): number => {
  const line = exposition.split("\n").find((l) => l.startsWith(`${series} `))
  return line === undefined ? 0 : Number(line.slice(series.length + 1))
}

interface Line {
  readonly message: string
  readonly level: string
  readonly annotations: Record<string, unknown>
}

/** Every log line of the server's fibers, as its JSON logger would write them. */
const captureLogs = () => {
  const lines: Array<Line> = []
  const logger = Logger.make<unknown, void>(({ annotations, logLevel, message }) => {
    lines.push({
      message: Array.isArray(message) ? message.map(String).join(" ") : String(message),
      level: logLevel.label,
      annotations: Object.fromEntries(HashMap.toEntries(annotations))
    })
  })
  return { lines, layer: Logger.replace(Logger.defaultLogger, logger) }
}

const firstKey = (context: Context.Context<Accounts | ApiKeys>, name: string) =>
  Effect.gen(function*() {
    const account = yield* Effect.flatMap(Accounts, (a) => a.create({ name }))
    const key = yield* Effect.flatMap(ApiKeys, (k) => k.create(account.id, { name: "ops" }))
    return { account, key: Redacted.value(key.secret) }
  }).pipe(Effect.provide(context))

describe("operations over a real port", () => {
  it.scopedLive("/metrics moves with a proof, a delivery and a refusal; each proof change and attempt is one log line", () =>
    Effect.gen(function*() {
      const logs = captureLogs()
      const receiver = yield* startWebhookReceiver()
      const { baseUrl, context } = yield* startServer({ allowInsecureWebhooks: true, workers: true, operations: { accessLog: true } }).pipe(
        Effect.provide(logs.layer)
      )
      const { account, key } = yield* firstKey(context, "Ops")
      const client = makeHttpClient(baseUrl, { token: key })
      const call = (method: string, path: string, body?: unknown) => Effect.promise(() => client.send(method, path, { body }))
      const scrape = Effect.map(call("GET", "/metrics"), (reply) => {
        expect(reply.status).toBe(200)
        expect(reply.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/)
        return reply.text
      })

      const before = yield* scrape
      const webhook = yield* call("POST", "/api/v1/webhooks", { url: receiver.url, events: ["proof.completed"] })
      const proof = yield* call("POST", "/api/v1/proofs", { type: "multiplier", inputs: { a: 3, b: 11 } })
      expect(proof.status).toBe(202)
      yield* receiver.waitFor(1).pipe(Effect.timeout("60 seconds"))
      const proofId: string = proof.json.proof_id
      // The attempt is recorded just after the receiver answered: wait for its log line.
      const attemptLine = () => logs.lines.find((l) => l.message === "webhook attempt succeeded")
      for (let i = 0; i < 100 && attemptLine() === undefined; i++) yield* Effect.sleep("50 millis")
      // 60 metered requests a minute per key: verify until the first refusal. The windows are the
      // wall clock's minutes, so on a loaded machine the burst may span two of them; the refusal
      // still comes right after an answer that left nothing in the window.
      let verified = 0
      let last = yield* call("GET", `/api/v1/proofs/${proofId}/verify`)
      while (last.status === 200 && verified < 200) {
        verified++
        const previous = last
        last = yield* call("GET", `/api/v1/proofs/${proofId}/verify`)
        if (last.status === 429) expect(previous.headers.get("ratelimit")).toMatch(/^"key";r=0;t=\d+$/)
      }
      expect(last.status).toBe(429)
      expect(verified).toBeGreaterThanOrEqual(59)
      const after = yield* scrape

      const moved = (series: string) => sample(after, series) - sample(before, series)
      expect(moved('mzk_http_requests_total{method="POST",route="/api/v1/proofs",status="202"}')).toBe(1)
      expect(moved('mzk_http_requests_total{method="GET",route="/api/v1/proofs/:id/verify",status="200"}')).toBe(verified)
      expect(moved('mzk_http_request_duration_seconds_count{method="POST",route="/api/v1/proofs"}')).toBe(1)
      for (const status of ["queued", "running", "completed"]) {
        expect(moved(`mzk_proofs_total{status="${status}",circuit="multiplier"}`), status).toBe(1)
      }
      expect(moved('mzk_proof_duration_seconds_count{circuit="multiplier",status="completed"}')).toBe(1)
      expect(sample(after, 'mzk_proof_queue_depth{status="queued"}')).toBe(0)
      expect(moved('mzk_webhook_attempts_total{outcome="succeeded"}')).toBe(1)
      expect(moved('mzk_webhook_attempt_duration_seconds_count{outcome="succeeded"}')).toBe(1)
      expect(moved('mzk_webhook_deliveries_total{outcome="succeeded"}')).toBe(1)
      expect(moved('mzk_rate_limit_refusals_total{policy="key"}')).toBe(1)
      // Node's process metrics come with mzk's own.
      expect(after).toContain("process_cpu_user_seconds_total")

      const proofLines = logs.lines.filter((l) => l.annotations.proof_id === proofId && l.annotations.event === "proof.status")
      expect(proofLines.map((l) => l.annotations.status)).toEqual(["queued", "running", "completed"])
      expect(proofLines[2]!.annotations).toMatchObject({ account_id: account.id, circuit: "multiplier", duration_ms: expect.any(Number) })
      expect(attemptLine()!.annotations).toMatchObject({
        webhook_id: webhook.json.id, event_type: "proof.completed", attempt: 1, outcome: "succeeded", status_code: 200,
        delivery_status: "succeeded", latency_ms: expect.any(Number)
      })
      const access = logs.lines.filter((l) => l.annotations.event === "http.request")
      expect(access.find((l) => l.annotations.route === "/api/v1/proofs")!.annotations).toMatchObject({
        method: "POST", path: "/api/v1/proofs", status: 202, request_id: proof.headers.get("request-id")
      })
      const everything = JSON.stringify(logs.lines)
      for (const secret of [key, webhook.json.secret as string]) expect(everything).not.toContain(secret)
      expect(everything).not.toContain(receiver.url)
    }), 120_000)

  it.scopedLive("/healthz answers; /readyz names a pending migration with 503 and recovers once it is applied", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "mzk-ready-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
      const filename = join(dir, "mzk.db")
      const { client } = yield* startServer({ database: { kind: "sqlite", filename } })
      const health = yield* Effect.promise(() => client.send("GET", "/healthz"))
      expect([health.status, health.json, health.headers.get("cache-control")]).toEqual([200, { status: "ok" }, "no-store"])
      const ready = yield* Effect.promise(() => client.send("GET", "/readyz"))
      expect(ready.status).toBe(200)
      expect(ready.json).toEqual({
        status: "ready",
        checks: {
          database: { ok: true, message: "reachable, takes writes" },
          migrations: { ok: true, message: "applied" },
          prover: { ok: true, message: "loads on first use" }
        }
      })

      // As if this code were newer than the database: one of its migrations is not recorded there.
      const conn = yield* openSqlite({ filename })
      const forget = (name: string) => conn.query((db) => db.deleteFrom("kysely_migration" as never).where("name" as never, "=", name as never).execute())
      yield* forget("0005_circuits_read_scope")
      const pending = yield* Effect.promise(() => client.send("GET", "/readyz"))
      expect(pending.status).toBe(503)
      expect(pending.json).toMatchObject({
        status: "not_ready",
        checks: { database: { ok: true }, migrations: { ok: false, message: "1 pending (0005_circuits_read_scope): run mzk migrate" } }
      })
      yield* conn.query((db) =>
        db.insertInto("kysely_migration" as never).values({ name: "0005_circuits_read_scope", timestamp: new Date().toISOString() } as never).execute())
      expect((yield* Effect.promise(() => client.send("GET", "/readyz"))).status).toBe(200)
    }), 60_000)

  it.scopedLive("/metrics behind a token: refused without it or with another, in constant time; served with it", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* startServer({ operations: { metricsToken: "scrape-me-please" } })
      const client = makeHttpClient(baseUrl)
      const none = yield* Effect.promise(() => client.send("GET", "/metrics"))
      expect(none.status).toBe(401)
      expect(none.json.error).toMatchObject({ code: "invalid_api_key", message: expect.stringContaining("metrics token") })
      expect((yield* Effect.promise(() => client.send("GET", "/metrics", { token: "scrape-me-pleasE" }))).status).toBe(401)
      const served = yield* Effect.promise(() => client.send("GET", "/metrics", { token: "scrape-me-please" }))
      expect(served.status).toBe(200)
      expect(served.text).toContain("mzk_http_requests_total")
      // The probes stay open: a load balancer has no token.
      expect((yield* Effect.promise(() => client.send("GET", "/readyz"))).status).toBe(200)
    }), 60_000)
})

describe("a worker's operational endpoints", () => {
  it.scopedLive("an API-only server queues the proof, the worker on the same database proves it and counts it on its own /metrics", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "mzk-worker-ops-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
      const database = { kind: "sqlite", filename: join(dir, "mzk.db") } as const
      const server = yield* startServer({ database })
      const workerContext = yield* Layer.build(WorkerProcessLive({ database, port: 0 }))
      // With a port the worker's layer has an HttpServer; its type is the union of both shapes.
      const address = Context.get(workerContext as unknown as Context.Context<HttpServer.HttpServer>, HttpServer.HttpServer).address
      if (address._tag !== "TcpAddress") return yield* Effect.dieMessage("expected a TCP address")
      const worker = makeHttpClient(`http://127.0.0.1:${address.port}`)

      const { key } = yield* firstKey(server.context, "Worker ops")
      const api = makeHttpClient(server.baseUrl, { token: key })
      const proof = yield* Effect.promise(() => api.send("POST", "/api/v1/proofs", { body: { type: "multiplier", inputs: { a: 2, b: 5 } } }))
      let status = proof.json.status as string
      for (let i = 0; i < 300 && status !== "completed"; i++) {
        yield* Effect.sleep("100 millis")
        status = (yield* Effect.promise(() => api.send("GET", `/api/v1/proofs/${proof.json.proof_id}`))).json.status
      }
      expect(status).toBe("completed")

      const completed = 'mzk_proofs_total{status="completed",circuit="multiplier"}'
      const workerMetrics = (yield* Effect.promise(() => worker.send("GET", "/metrics"))).text
      expect(sample(workerMetrics, completed)).toBe(1)
      expect(sample(workerMetrics, 'mzk_proofs_total{status="queued",circuit="multiplier"}')).toBe(0)
      const serverMetrics = (yield* Effect.promise(() => server.client.send("GET", "/metrics"))).text
      expect(sample(serverMetrics, 'mzk_proofs_total{status="queued",circuit="multiplier"}')).toBe(1)
      expect(sample(serverMetrics, completed)).toBe(0)

      expect((yield* Effect.promise(() => worker.send("GET", "/readyz"))).json).toMatchObject({ status: "ready", checks: { prover: { message: "loaded" } } })
      const api404 = yield* Effect.promise(() => worker.send("GET", "/api/v1/keys", { token: key }))
      expect(api404.status).toBe(404)
      expect(api404.json.error).toMatchObject({ code: "not_found", request_id: api404.headers.get("request-id") })
    }), 120_000)
})

/** One statement as the server's administrator, on a connection of its own. */
const admin = (statement: string) =>
  Effect.promise(async () => {
    const client = new pg.Client({ connectionString: adminUrl })
    await client.connect()
    try {
      await client.query(statement)
    } finally {
      await client.end()
    }
  })

describePostgres("readiness on Postgres", () => {
  it.scopedLive("/readyz is 503 while the database refuses connections, and ready again once it accepts them", () =>
    Effect.gen(function*() {
      const { name, url } = yield* freshDatabaseUrl
      const { client } = yield* startServer({ database: { kind: "postgres", url } })
      expect((yield* Effect.promise(() => client.send("GET", "/readyz"))).status).toBe(200)
      yield* admin(`alter database ${name} allow_connections false`)
      yield* Effect.addFinalizer(() => admin(`alter database ${name} allow_connections true`))
      yield* admin(`select pg_terminate_backend(pid) from pg_stat_activity where datname = '${name}' and pid <> pg_backend_pid()`)
      const down = yield* Effect.promise(() => client.send("GET", "/readyz"))
      expect(down.status).toBe(503)
      expect(down.json.checks.database).toEqual({ ok: false, message: "unreachable" })
      // The database's own error (host, user, database name) stays in the server's log.
      expect(down.text).not.toContain(name)
      yield* admin(`alter database ${name} allow_connections true`)
      expect((yield* Effect.promise(() => client.send("GET", "/readyz"))).status).toBe(200)
    }), 60_000)

  it.scopedLive("a read-only database: /readyz is 503 naming it, reads answer, writes are 503 and logged, and all recovers without a restart", () =>
    Effect.gen(function*() {
      const { name, url } = yield* freshDatabaseUrl
      // The pool's connections end; new ones take the database's settings (as after a failover to a standby).
      const reconnect = admin(`select pg_terminate_backend(pid) from pg_stat_activity where datname = '${name}' and pid <> pg_backend_pid()`)
      const logs = captureLogs()
      const { baseUrl, context } = yield* startServer({ database: { kind: "postgres", url } }).pipe(Effect.provide(logs.layer))
      const { key } = yield* firstKey(context, "Read-only")
      const client = makeHttpClient(baseUrl, { token: key })
      const call = (method: string, path: string, options: { body?: unknown; token?: string } = {}) => Effect.promise(() => client.send(method, path, options))
      const unused = yield* call("POST", "/api/v1/keys", { body: { name: "unused" } })
      expect((yield* call("GET", "/readyz")).status).toBe(200)

      yield* admin(`alter database ${name} set default_transaction_read_only = on`)
      yield* reconnect
      // Once the pool has let go of the ended connections (a query may meet one first), readiness names the cause.
      const reason = "the database is read-only: a standby, or default_transaction_read_only is on (25006)"
      const readiness = (message: string) =>
        Effect.promise(() => eventually(async () => {
          const reply = await client.send("GET", "/readyz")
          return reply.json.checks.database.message === message ? reply : undefined
        }, 20_000, 50))
      const down = yield* readiness(`writes fail: ${reason}`)
      expect([down.status, down.json.checks.database]).toEqual([503, { ok: false, message: `writes fail: ${reason}` }])
      // The key's first use cannot be recorded: the read answers all the same.
      expect((yield* call("GET", "/api/v1/keys", { token: unused.json.key })).status).toBe(200)
      const write = yield* call("POST", "/api/v1/keys", { body: { name: "refused" } })
      expect([write.status, write.json.error.code, write.json.error.message]).toEqual([503, "service_unavailable", "Storage is temporarily unavailable; retry later"])
      const failures = logs.lines.filter((line) => line.annotations.event === "storage.failure")
      expect(failures.find((line) => line.annotations.request_id === write.headers.get("request-id"))).toMatchObject({
        level: "ERROR",
        annotations: { reason, database_code: "25006", database_error: expect.stringMatching(/^cannot execute .* in a read-only transaction$/) }
      })
      expect(failures.find((line) => line.annotations.key_id === unused.json.id)).toMatchObject({ level: "ERROR", annotations: { database_code: "25006" } })

      yield* admin(`alter database ${name} reset default_transaction_read_only`)
      yield* reconnect
      expect((yield* readiness("reachable, takes writes")).status).toBe(200)
      expect((yield* call("POST", "/api/v1/keys", { body: { name: "after" } })).status).toBe(201)
    }), 60_000)
})
