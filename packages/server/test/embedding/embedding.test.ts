import { spawn } from "node:child_process"
import { createHash } from "node:crypto"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { actingFor, type AccountId, ApiKeys, Circuits, metered, Proofs, Prover } from "@mzk/core"
import { apiPath, mountedPath } from "@mzk/http"
import { BUILD_DIR } from "@mzk/proving"
import { FakeProver } from "@mzk/testkit"
import { Duration, Effect, Layer, Redacted } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { createMzk, type Mzk } from "../../src/createMzk.js"
import { root } from "../processes.js"
import { makeForeignGroth16 } from "../proving/verifications.fixtures.js"

/** Calls `handler` as a Next.js route handler is called: the whole URL, and a route context after the request. */
const nextRoute = (handler: Mzk["fetch"], token: string) => {
  // `export const GET = mzk.fetch` in app/mzk/[...path]/route.ts: Next passes the context too.
  const route: (request: Request, context: { params: Promise<{ path: Array<string> }> }) => Promise<Response> = handler
  return async (method: string, path: string, body?: unknown) => {
    const response = await route(
      new Request(`https://app.example/mzk${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      }),
      { params: Promise.resolve({ path: path.split("/").filter((part) => part !== "") }) }
    )
    return { status: response.status, json: await response.json() as Record<string, any> }
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Polls the proof through `call` until it leaves `queued`/`running`, or `withinMs` passes. */
const settled = async (call: ReturnType<typeof nextRoute>, proofId: string, withinMs = 60_000) => {
  const deadline = Date.now() + withinMs
  for (;;) {
    const { json } = await call("GET", `/api/v1/proofs/${proofId}`)
    if ((json.status !== "queued" && json.status !== "running") || Date.now() > deadline) return json
    await sleep(50)
  }
}

const tempDirs: Array<string> = []
const tempDatabase = () => {
  const dir = mkdtempSync(join(tmpdir(), "mzk-embedding-"))
  tempDirs.push(dir)
  return `sqlite:${join(dir, "mzk.db")}`
}
afterAll(() => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true })
})

describe("createMzk", () => {
  it("serves from creation; the loops start with start(): a proof queued before it completes after it, and verifies", async () => {
    const mzk = await createMzk({ database: "sqlite::memory:" })
    try {
      const call = nextRoute(mzk.fetch, (await mzk.createAccount({ name: "Next app" })).api_key)
      const created = await call("POST", "/api/v1/proofs", { type: "multiplier", inputs: { a: 4, b: 5 } })
      expect(created).toMatchObject({ status: 202, json: { status: "queued" } })
      // Past the worker's poll interval (1 s): nothing runs it yet.
      await sleep(1_500)
      expect((await call("GET", `/api/v1/proofs/${created.json.proof_id}`)).json.status).toBe("queued")

      await mzk.start()
      await mzk.start()
      expect(await settled(call, created.json.proof_id)).toMatchObject({ status: "completed", public_inputs: { c: "20" } })
      expect(await call("GET", `/api/v1/proofs/${created.json.proof_id}/verify`)).toMatchObject({ status: 200, json: { valid: true } })
    } finally {
      await mzk.stop()
    }
    await mzk.stop()
    await expect(mzk.start()).rejects.toThrow(/start\(\) after stop\(\)/)
  }, 120_000)

  it("workers: false leaves the loops off; an mzk with workers over the same database proves what it queued", async () => {
    const database = tempDatabase()
    const api = await createMzk({ database, workers: false })
    let worker: Mzk | undefined
    try {
      await api.start()
      const call = nextRoute(api.fetch, (await api.createAccount({ name: "API only" })).api_key)
      const created = await call("POST", "/api/v1/proofs", { type: "multiplier", inputs: { a: 2, b: 9 } })
      expect(created.status).toBe(202)
      await sleep(1_500)
      expect((await call("GET", `/api/v1/proofs/${created.json.proof_id}`)).json.status).toBe("queued")

      // As `mzk worker` would, in another process: here another instance over the same file.
      worker = await createMzk({ database })
      await worker.start()
      expect(await settled(call, created.json.proof_id)).toMatchObject({ status: "completed", public_inputs: { c: "18" } })
      // The API-only instance verifies with a prover of its own, started on this first use.
      expect(await call("GET", `/api/v1/proofs/${created.json.proof_id}/verify`)).toMatchObject({ status: 200, json: { valid: true } })
    } finally {
      await worker?.stop()
      await api.stop()
    }
  }, 120_000)

  it("the first proof counts none of the prover pool's start (it starts on first use): not in proving_ms, duration_ms nor /usage", async () => {
    // A pool that takes a second to start, as a real one takes seconds; it reports its own time on each proof.
    let readyAt = Number.POSITIVE_INFINITY
    const provingTimes: Array<number> = []
    const slowPool = Layer.effect(Prover, Effect.gen(function*() {
      const inner = yield* Prover
      yield* Effect.promise(() => sleep(1_000))
      readyAt = Date.now()
      return {
        ...inner,
        prove: (circuit, inputs) =>
          Effect.map(Effect.timed(inner.prove(circuit, inputs)), ([took, out]) => {
            provingTimes.push(Duration.toMillis(took))
            return { ...out, proving_ms: Duration.toMillis(took) }
          })
      } satisfies Prover["Type"]
    })).pipe(Layer.provide(FakeProver({ duration: "20 millis" })))
    const mzk = await createMzk({ database: "sqlite::memory:", prover: slowPool })
    try {
      const { account_id, api_key } = await mzk.createAccount({ name: "First proof" })
      const call = nextRoute(mzk.fetch, api_key)
      await mzk.start()
      const ids: Array<string> = []
      for (const b of [11, 12]) {
        const created = await call("POST", "/api/v1/proofs", { type: "multiplier", inputs: { a: 3, b } })
        ids.push(created.json.proof_id)
        expect(await settled(call, created.json.proof_id)).toMatchObject({ status: "completed" })
      }
      const [first, second] = await Promise.all(ids.map(async (id) => (await call("GET", `/api/v1/proofs/${id}`)).json))
      for (const [i, proof] of [first!, second!].entries()) {
        // No proof started before the pool was up, so no part of the start is in its times.
        expect(Date.parse(proof.started_at)).toBeGreaterThanOrEqual(readyAt)
        expect(proof.duration_ms).toBe(Date.parse(proof.finished_at) - Date.parse(proof.started_at))
        // proving_ms is what the prover measured of its own work on the proof.
        expect(proof.proving_ms).toBe(Math.round(provingTimes[i]!))
        expect(proof.proving_ms).toBeLessThanOrEqual(proof.duration_ms)
      }
      const usage = await mzk.usage(account_id)
      expect(usage.proving_seconds.today).toBe((first!.duration_ms + second!.duration_ms) / 1000)
    } finally {
      await mzk.stop()
    }
  }, 60_000)

  it("the embedder's own proofs.create needs no request: as system it charges the day only; actingFor charges the key", async () => {
    const mzk = await createMzk({ database: "sqlite::memory:", workers: false })
    try {
      const { account_id, api_key } = await mzk.createAccount({ name: "Embedder" })
      const input = { type: "multiplier", inputs: { a: 2, b: 3 } }
      const create = Effect.flatMap(Proofs, (p) => metered(p.create(account_id as AccountId, input)))
      const asSystem = await mzk.runtime.runPromise(create)
      expect(asSystem.value.status).toBe("queued")
      expect(asSystem.rate_limits.map((w) => [w.policy, w.remaining])).toEqual([["daily", 4999]])
      const principal = await mzk.runtime.runPromise(Effect.flatMap(ApiKeys, (k) => k.authenticate(Redacted.make(api_key))))
      const asKey = await mzk.runtime.runPromise(actingFor(principal)(create))
      expect(asKey.rate_limits.map((w) => [w.policy, w.remaining])).toEqual([["key", 59], ["daily", 4998]])
      // A request with the same key shares that minute: the context the pipeline sets names the same key.
      const call = nextRoute(mzk.fetch, api_key)
      expect((await call("POST", "/api/v1/proofs", input)).status).toBe(202)
      const after = await mzk.runtime.runPromise(actingFor(principal)(create))
      expect(after.rate_limits.map((w) => [w.policy, w.remaining])).toEqual([["key", 57], ["daily", 4996]])
      // The usage report, in process: the day as charged, the four proofs queued; no key, so no minute.
      const usage = await mzk.usage(account_id)
      expect(usage.rate_limits).toMatchObject({ per_minute: null, per_day: { used: 4, remaining: 4996 } })
      expect(usage.proofs_today.queued).toBe(4)
    } finally {
      await mzk.stop()
    }
  })

  it("circuit versions in process, as over HTTP: the runtime's Circuits takes name@N, lists and removes versions", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mzk-embed-versions-"))
    const mzk = await createMzk({
      database: "sqlite::memory:",
      workers: false,
      circuits: { developmentPtau: { power: 8, dir }, cacheDir: join(dir, "cache") }
    })
    try {
      const { account_id, api_key } = await mzk.createAccount({ name: "Versions" })
      const account = account_id as AccountId
      const main = new TextEncoder().encode("pragma circom 2.1.6;\ntemplate T() { signal input a; }\ncomponent main = T();\n")
      const upload = Effect.flatMap(Circuits, (c) => c.create(account, { name: "sq", source: { kind: "circom", main: "main.circom", files: { "main.circom": main } } }))
      expect((await mzk.runtime.runPromise(upload)).version).toBe(1)
      expect((await mzk.runtime.runPromise(upload)).version).toBe(2)
      const versions = await mzk.runtime.runPromise(Effect.flatMap(Circuits, (c) => c.versions(account, "sq", {})))
      expect(versions.items.map((c) => c.version)).toEqual([2, 1])
      const overHttp = await nextRoute(mzk.fetch, api_key)("GET", "/api/v1/circuits/sq@1")
      expect([overHttp.status, overHttp.json.version]).toEqual([200, 1])
      await mzk.runtime.runPromise(Effect.flatMap(Circuits, (c) => c.remove(account, "sq@1")))
      const left = await nextRoute(mzk.fetch, api_key)("GET", "/api/v1/circuits/sq/versions")
      expect(left.json.versions.map((c: { version: number }) => c.version)).toEqual([2])
    } finally {
      await mzk.stop()
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it("verifies a proof made elsewhere in process, as POST /verifications does: valid, tampered, malformed", async () => {
    const mzk = await createMzk({ database: "sqlite::memory:", workers: false })
    try {
      const { account_id } = await mzk.createAccount({ name: "Verifier" })
      const foreign = await makeForeignGroth16()
      const input = { proving_system: "groth16", circuit: "multiplier", proof: foreign.proof, public_signals: foreign.signals }
      expect(await mzk.verify(account_id, input)).toMatchObject({ valid: true, proving_system: "groth16", circuit: "multiplier", proof_id: null })
      expect((await mzk.verify(account_id, { ...input, public_signals: ["34"] })).valid).toBe(false)
      const { circuit: _, ...withoutCircuit } = input
      expect((await mzk.verify(account_id, { ...withoutCircuit, verification_key: foreign.key })).valid).toBe(true)
      await expect(mzk.verify(account_id, { ...input, proof: { ...foreign.proof, pi_a: ["1", "3", "1"] } })).rejects.toThrow(/proof\.pi_a/)
      await expect(mzk.verify(account_id, { ...input, proving_system: "plonk" })).rejects.toThrow(/proof\.protocol|proving_system/)
    } finally {
      await mzk.stop()
    }
  }, 120_000)

  it("takes the application's session check as a plain function", async () => {
    const sessions = new Map<string, string>()
    const mzk = await createMzk({ database: "sqlite::memory:", workers: false, sessionAuthenticator: async (token) => {
      const account_id = sessions.get(token)
      return account_id === undefined ? null : { account_id }
    } })
    try {
      sessions.set("sess_ada", (await mzk.createAccount({ name: "Ada" })).account_id)
      const asAda = nextRoute(mzk.fetch, "sess_ada")
      expect(await asAda("POST", "/api/v1/keys", { name: "from-a-session" })).toMatchObject({ status: 201, json: { name: "from-a-session" } })
      expect(await nextRoute(mzk.fetch, "sess_nobody")("GET", "/api/v1/keys")).toMatchObject({ status: 401, json: { error: { code: "invalid_api_key" } } })
    } finally {
      await mzk.stop()
    }
  })

  it("takes the event retention: GET /events keeps that long, and a recovery reaches no further back", async () => {
    const mzk = await createMzk({ database: "sqlite::memory:", workers: false, events: { retentionMs: 3_600_000 } })
    try {
      const call = nextRoute(mzk.fetch, (await mzk.createAccount({ name: "Ada" })).api_key)
      const webhook = await call("POST", "/api/v1/webhooks", { url: "https://hooks.example.com/mzk", events: ["key.created"] })
      const since = (ms: number) => ({ since: new Date(Date.now() - ms).toISOString() })
      const tooFar = await call("POST", `/api/v1/webhooks/${webhook.json.id}/recover`, since(2 * 3_600_000))
      expect(tooFar).toMatchObject({ status: 400, json: { error: { code: "invalid_request", details: [{ path: "since" }] } } })
      expect((await call("POST", `/api/v1/webhooks/${webhook.json.id}/recover`, since(1_800_000))).status).toBe(202)
      expect((await call("GET", "/api/v1/events?type=key.created")).json.total).toBe(1)
    } finally {
      await mzk.stop()
    }
  })

  it("refuses a database URL it cannot use, and an account name the API would refuse", async () => {
    await expect(createMzk({ database: "mysql://localhost/mzk" })).rejects.toThrow(/Unknown database/)
    const mzk = await createMzk({ database: "sqlite::memory:", workers: false })
    try {
      const refused = mzk.createAccount({ name: "   " })
      await expect(refused).rejects.toThrow(/^createAccount: Invalid request/)
      // The error itself, not Effect's FiberFailure around it.
      await expect(refused).rejects.toHaveProperty("name", "Error")
    } finally {
      await mzk.stop()
    }
  })

  it("stop() leaves nothing running: an application that proved, stopped mzk and returned exits by itself", async () => {
    const fixture = fileURLToPath(new URL("../fixtures/embedding/stopThenExit.ts", import.meta.url))
    // The source condition: how the workspace's packages resolve to their TypeScript sources.
    const child = spawn(process.execPath, ["--import", "tsx", "--conditions=@mzk/source", fixture, tempDatabase()], { cwd: root })
    let output = ""
    child.stdout.on("data", (chunk) => (output += chunk))
    child.stderr.on("data", (chunk) => (output += chunk))
    const exit = await new Promise<{ code: number | null; signal: string | null }>((resolve) => {
      const timer = setTimeout(() => child.kill("SIGKILL"), 170_000)
      child.once("exit", (code, signal) => {
        clearTimeout(timer)
        resolve({ code, signal })
      })
    })
    expect(exit, output).toEqual({ code: 0, signal: null })
    expect(output).toContain('{"stopped":true,"status":"completed","valid":true}')
    // What still held the event loop right after stop(): only the child's stdout and stderr pipes.
    // A keep-alive socket, a timer or a prover thread left behind would be listed here, even one
    // that would have ended by itself seconds later.
    expect(JSON.parse(/^\{"activeAfterStop":.*$/m.exec(output)?.[0] ?? "{}")).toEqual({ activeAfterStop: ["PipeWrap", "PipeWrap"] })
  }, 180_000)
})

describe("createMzk's handlers stream a circuit's artifacts", () => {
  it("fetch and the Node handler send a built-in circuit's zkey whole, by range and as a HEAD, byte for byte", async () => {
    const mzk = await createMzk({ database: "sqlite::memory:", workers: false })
    const server = createServer(mzk.handler)
    try {
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
      const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      const token = (await mzk.createAccount({ name: "Downloads" })).api_key
      const file = new Uint8Array(readFileSync(join(BUILD_DIR, "multiplier", "multiplier.zkey")))
      const etag = `"${createHash("sha256").update(file).digest("hex")}"`
      const path = "/api/v1/circuits/multiplier/artifacts/zkey"
      const ways = {
        fetch: (init: RequestInit) => mzk.fetch(new Request(`https://app.example${path}`, init)),
        handler: (init: RequestInit) => fetch(`${origin}${path}`, init)
      }
      for (const [way, send] of Object.entries(ways)) {
        const get = (headers: Record<string, string> = {}, method = "GET") => send({ method, headers: { authorization: `Bearer ${token}`, ...headers } })
        const whole = await get()
        expect([way, whole.status, whole.headers.get("etag"), whole.headers.get("content-length")]).toEqual([way, 200, etag, String(file.length)])
        expect(new Uint8Array(await whole.arrayBuffer())).toEqual(file)
        // A resumed download: the rest from an offset inside the file, only while it is the same file.
        const from = Math.floor(file.length / 3)
        const rest = await get({ range: `bytes=${from}-`, "if-range": etag })
        expect([way, rest.status, rest.headers.get("content-range")]).toEqual([way, 206, `bytes ${from}-${file.length - 1}/${file.length}`])
        expect(new Uint8Array(await rest.arrayBuffer())).toEqual(file.subarray(from))
        const head = await get({}, "HEAD")
        expect([way, head.status, head.headers.get("content-length"), (await head.arrayBuffer()).byteLength]).toEqual([way, 200, String(file.length), 0])
        expect([way, (await get({ "if-none-match": etag })).status]).toEqual([way, 304])
      }
    } finally {
      await new Promise((resolve) => server.close(resolve))
      await mzk.stop()
    }
  }, 60_000)
})

describe("the path a mounted mzk routes", () => {
  it("keeps /api/v1 and the docs page, drops an app's mount point before /api/v1, restores what a framework cut", () => {
    const cases: ReadonlyArray<readonly [string, string | undefined, string]> = [
      // [path as handed on, apiPath, mountedPath]
      ["/api/v1/proofs?limit=5", "/api/v1/proofs?limit=5", "/api/v1/proofs?limit=5"],
      ["/api/v1", "/api/v1", "/api/v1"],
      ["/docs", "/docs", "/docs"],
      ["/mzk/api/v1/keys", "/api/v1/keys", "/api/v1/keys"],
      ["/a/b/api/v1/keys?x=1", "/api/v1/keys?x=1", "/api/v1/keys?x=1"],
      ["/v1/proofs", undefined, "/api/v1/proofs"],
      ["/proofs?limit=5", undefined, "/api/v1/proofs?limit=5"],
      ["/", undefined, "/api/v1"],
      // Not mzk's own base: a longer segment, or /api/v1 only inside the query.
      ["/api/v10/keys", undefined, "/api/v1/api/v10/keys"],
      ["/search?next=/api/v1/keys", undefined, "/api/v1/search?next=/api/v1/keys"]
    ]
    for (const [path, api, mounted] of cases) {
      expect([path, apiPath(path), mountedPath(path)]).toEqual([path, api, mounted])
    }
  })
})
