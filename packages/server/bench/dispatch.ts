/**
 * CPU per request of mzk's request path in one process, without sockets or wrk: the dispatcher
 * `mzk serve` runs (every stage, the real SQLite file, metrics on, JSON log lines to stdout) called
 * directly with the requests of bench/http.ts, GET /api/v1/keys and POST /api/v1/proofs. A script,
 * not a test; for finding what the request path costs (with Node's --cpu-prof) where the HTTP
 * bench's figures move by tens of percent with the machine's load.
 *
 *   pnpm exec tsx packages/server/bench/dispatch.ts [--requests 20000] [--rounds 5] > /dev/null
 *
 * `--only keys` (or `proofs`) runs one endpoint, for a profile of it alone.
 * Prints to stderr each round's CPU time per request (user + system of the process, over the
 * round's requests, run one after another) and the median round. `--smoke` runs one round of 50.
 */
import { Accounts, ApiKeys } from "@mzk/core"
import { makeDispatcher } from "@mzk/http"
import { Effect, Layer, Redacted, Runtime } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { parseArgs } from "node:util"
import { mzkLogger } from "../src/logging.js"
import { ServicesLive } from "../src/mzk.js"

const { values } = parseArgs({
  options: {
    requests: { type: "string", default: "20000" },
    rounds: { type: "string", default: "5" },
    smoke: { type: "boolean", default: false },
    only: { type: "string" },
    floor: { type: "boolean", default: false }
  }
})
const REQUESTS = values.smoke ? 50 : Number(values.requests)
const ROUNDS = values.smoke ? 1 : Number(values.rounds)
const dir = mkdtempSync(join(tmpdir(), "mzk-dispatch-"))

const services = ServicesLive({ database: { kind: "sqlite", filename: join(dir, "mzk.db") }, workers: false, operations: { metrics: true } })
  .pipe(Layer.provideMerge(mzkLogger()))

const program = Effect.gen(function*() {
  const dispatch = yield* makeDispatcher
  const runtime = yield* Effect.runtime<never>()
  const run = Runtime.runPromise(runtime)
  // Proof creation is limited to 60 a minute per key and 10 keys an account: enough accounts that
  // no request is refused (each answer's status is checked).
  const keysNeeded = Math.ceil((REQUESTS * ROUNDS + REQUESTS) / 60) + 1
  const keys: Array<string> = []
  for (let a = 0; keys.length < keysNeeded; a++) {
    const account = yield* (yield* Accounts).create({ name: `bench ${a}` })
    for (let k = 0; k < 10 && keys.length < keysNeeded; k++) {
      const created = yield* (yield* ApiKeys).create(account.id, { name: `k${k}` })
      keys.push(Redacted.value(created.secret))
    }
  }
  // The listing's key is its account's only key, as in bench/http.ts.
  const listKey = Redacted.value((yield* (yield* ApiKeys).create((yield* (yield* Accounts).create({ name: "lister" })).id, { name: "only" })).secret)
  const request = (method: string, url: string, key: string, body = "") => ({
    method,
    url,
    headers: { host: "bench", authorization: `Bearer ${key}`, ...(body === "" ? {} : { "content-type": "application/json", "content-length": String(body.length) }) },
    body: Effect.succeed(body),
    stream: () => Effect.void,
    remoteAddress: "127.0.0.1"
  })
  const PROOF = JSON.stringify({ type: "multiplier", inputs: { a: "3", b: "11" } })
  let sent = 0
  const endpoints = [
    { name: "GET /api/v1/keys", status: 200, make: () => request("GET", "/api/v1/keys", listKey) },
    { name: "POST /api/v1/proofs", status: 202, make: () => request("POST", "/api/v1/proofs", keys[1 + (Math.floor(sent++ / 60) % (keys.length - 1))]!, PROOF) }
  ]
  for (const endpoint of endpoints.filter((e) => values.only === undefined || e.name.includes(values.only!))) {
    const perRequest: Array<number> = []
    for (let round = 0; round <= ROUNDS; round++) {
      const started = process.cpuUsage()
      if (values.floor && endpoint.name.startsWith("GET")) {
        // The services the endpoint calls, and JSON.stringify, without the request path around them.
        const apiKeys = yield* ApiKeys
        for (let i = 0; i < REQUESTS; i++) {
          const body = yield* Effect.promise(() => run(Effect.flatMap(apiKeys.authenticate(Redacted.make(listKey)), (p) => Effect.map(apiKeys.list(p.account_id), (list) => JSON.stringify(list)))))
          if (body.length < 10) throw new Error("no listing")
        }
      } else for (let i = 0; i < REQUESTS; i++) {
        const answer = yield* Effect.promise(() => run(dispatch(endpoint.make())))
        if (answer.status !== endpoint.status) throw new Error(`${endpoint.name} answered ${answer.status}: ${String(answer.body)}`)
      }
      const used = process.cpuUsage(started)
      // The first round warms the JIT and the statement caches and is not counted.
      if (round > 0 || values.smoke) perRequest.push((used.user + used.system) / REQUESTS)
    }
    const sorted = [...perRequest].sort((a, b) => a - b)
    process.stderr.write(`${endpoint.name.padEnd(22)} CPU/request median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(1)} µs (rounds: ${perRequest.map((u) => u.toFixed(1)).join(", ")})\n`)
  }
})

await Effect.runPromise(Effect.scoped(Effect.provide(program, services))).finally(() => rmSync(dir, { recursive: true, force: true }))
