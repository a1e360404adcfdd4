/**
 * HTTP benchmark (a script, not a test): wrk against `mzk serve --no-workers` and against a
 * hand-written node:http + better-sqlite3 server doing the same work (baselineServer.ts), both on one
 * fresh SQLite file, in one run, on loopback only, for a bounded time.
 *
 *   pnpm exec tsx packages/server/bench/http.ts [--duration 10] [--connections 32] [--post-rate-cap 8000] [--pin]
 *
 * Needs Debian's wrk (apt-get install wrk). Each measurement (wrk -t2, --duration seconds) follows a
 * warm-up run of the same length. It measures:
 * - `GET /api/v1/keys` with one key, of an account that holds only that key;
 * - `POST /api/v1/proofs` `{"type":"multiplier","inputs":{"a":"3","b":"11"}}`: mzk runs API only, so
 *   a request is authenticated, validated, charged to the rate limits and queued, never proved.
 *   The real limits stay on (60 proof requests a minute per key, 5,000 proofs a UTC day per
 *   account, 10 keys per account), so the script first creates, for each server, its own accounts
 *   with 10 keys each, enough for --post-rate-cap req/s over warm-up and measurement, and wrk
 *   rotates through them (rotate-keys.lua). Any POST answer other than 202 fails the run.
 * Prints one table: req/s, p50, p99, non-2xx and socket errors per endpoint and server, mzk as a
 * share of hand-written, the key listing's targets and whether each endpoint reaches half of
 * hand-written, and each server's CPU time per request (user + system, all its threads, from
 * /proc). The load average is printed: other work on the machine shows up in the numbers.
 * `--pin` runs the servers on core 0 and wrk on core 1 (taskset), so CPU per request is not
 * blurred by wrk sharing a core; its req/s are not the targets' measurement.
 */
import { Accounts, ApiKeys } from "@mzk/core"
import Database from "better-sqlite3"
import { Effect, Redacted } from "effect"
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { parseArgs } from "node:util"
import { MzkCore } from "../src/mzk.js"

const { values } = parseArgs({
  options: {
    duration: { type: "string", default: "10" },
    connections: { type: "string", default: "32" },
    "post-rate-cap": { type: "string", default: "8000" },
    pin: { type: "boolean", default: false }
  }
})
const PIN = values.pin
const DURATION = Number(values.duration)
const RATE_CAP = Number(values["post-rate-cap"])
if (!(DURATION > 0 && DURATION <= 600 && RATE_CAP > 0)) throw new Error("--duration must be 1 to 600 seconds and --post-rate-cap positive")
const THREADS = 2
const PROOF_BODY = JSON.stringify({ type: "multiplier", inputs: { a: "3", b: "11" } })
const KEYS_PER_ACCOUNT = 10
const REQUESTS_PER_KEY = 60
const root = new URL("../../..", import.meta.url).pathname
const lua = new URL("rotate-keys.lua", import.meta.url).pathname
const dir = mkdtempSync(join(tmpdir(), "mzk-bench-"))
const file = join(dir, "mzk.db")
const children: Array<ChildProcess> = []
const servers = [
  { name: "mzk", base: "http://127.0.0.1:18090" },
  { name: "node:http+sqlite", base: "http://127.0.0.1:18091" }
] as const

const waitFor = async (url: string) => {
  for (let i = 0; i < 100; i++) {
    try {
      await fetch(url)
      return
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
  throw new Error(`${url} did not come up`)
}

/** `command` on the core given when --pin is set. */
const pinned = (core: number, command: string, args: Array<string>): [string, Array<string>] =>
  PIN ? ["taskset", ["-c", String(core), command, ...args]] : [command, args]

const start = (args: Array<string>) => {
  const child = spawn(...pinned(0, process.execPath, ["--import", "tsx", ...args]), { cwd: root, stdio: ["ignore", "ignore", "inherit"] })
  children.push(child)
  return child
}

interface Account { readonly account_id: string; readonly api_key: string }

/**
 * Accounts with their first key, through mzk's own services: what `mzk accounts create` runs, in
 * this process, because one CLI process per account costs seconds each and the pool needs hundreds.
 */
const createAccounts = (count: number) =>
  Effect.runPromise(Effect.gen(function*() {
    const accounts = yield* Accounts
    const apiKeys = yield* ApiKeys
    const created: Array<Account> = []
    for (let i = 0; i < count; i++) {
      const account = yield* accounts.create({ name: `bench-${i}` })
      const key = yield* apiKeys.create(account.id, { name: "default" })
      created.push({ account_id: account.id, api_key: Redacted.value(key.secret) })
    }
    return created
  }).pipe(Effect.provide(MzkCore({ database: { kind: "sqlite", filename: file } }))))

/** Fills each account up to 10 keys over mzk's API (`POST /api/v1/keys`); returns all the keys. */
const fillKeys = async (base: string, accounts: ReadonlyArray<Account>) => {
  const keys: Array<string> = []
  let next = 0
  const worker = async () => {
    while (next < accounts.length) {
      const account = accounts[next++]!
      keys.push(account.api_key)
      for (let i = 1; i < KEYS_PER_ACCOUNT; i++) {
        const response = await fetch(`${base}/api/v1/keys`, {
          method: "POST",
          headers: { authorization: `Bearer ${account.api_key}`, "content-type": "application/json" },
          body: JSON.stringify({ name: `bench-${i}` })
        })
        if (response.status !== 201) throw new Error(`POST /api/v1/keys answered ${response.status}: ${await response.text()}`)
        keys.push(((await response.json()) as { key: string }).key)
      }
    }
  }
  await Promise.all(Array.from({ length: 8 }, worker))
  return keys
}

/** One POST to each server with the same key: both must answer 202 with the same fields and headers. */
const probe = async (key: string) => {
  const answers = await Promise.all(servers.map(async ({ name, base }) => {
    const response = await fetch(`${base}/api/v1/proofs`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: PROOF_BODY
    })
    const body = (await response.json()) as Record<string, unknown>
    return {
      name,
      shape: `${response.status} ${Object.keys(body).sort().join(",")} ${JSON.stringify(body.public_inputs)} ` +
        `${response.headers.get("ratelimit-policy")} ${response.headers.get("ratelimit")?.replace(/r=\d+;t=\d+/, "r=…;t=…")} ` +
        `${response.headers.has("request-id")}`
    }
  }))
  for (const answer of answers) {
    if (answer.shape !== answers[0]!.shape || !answer.shape.startsWith("202 ")) {
      throw new Error(`POST /api/v1/proofs answers differ:\n${answers.map((a) => `  ${a.name}: ${a.shape}`).join("\n")}`)
    }
  }
}

interface Result {
  readonly rps: number
  readonly p50: string
  readonly p99: string
  readonly requests: number
  readonly non2xx: number
  readonly socketErrors: number
  /** POST only: answers other than 202, counted by rotate-keys.lua. */
  readonly unexpected: number
  /** The server's CPU time (user + system, every thread) per request, in µs. */
  readonly cpuUs: number
}

const TICKS_PER_SECOND = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim())
/** A process's CPU time so far (user + system, every thread), in seconds, from /proc. */
const cpuSeconds = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /, "").split(" ")
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND
}

const wrk = (pid: number, args: Array<string>): Result => {
  const cpuBefore = cpuSeconds(pid)
  const out = execFileSync(...pinned(1, "wrk", [`-t${THREADS}`, `-c${values.connections}`, `-d${DURATION}s`, "--latency", ...args]), {
    encoding: "utf8",
    timeout: (DURATION + 30) * 1000
  })
  const cpu = cpuSeconds(pid) - cpuBefore
  const latency = (p: string) => out.match(new RegExp(`^\\s+${p}%\\s+(\\S+)`, "m"))?.[1] ?? "?"
  const errors = out.match(/Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/)
  const requests = Number(out.match(/(\d+) requests in/)?.[1] ?? 0)
  return {
    rps: Number(out.match(/Requests\/sec:\s+([\d.]+)/)?.[1] ?? 0),
    p50: latency("50"),
    p99: latency("99"),
    requests,
    non2xx: Number(out.match(/Non-2xx or 3xx responses:\s+(\d+)/)?.[1] ?? 0),
    socketErrors: errors === null ? 0 : errors.slice(1).reduce((sum, n) => sum + Number(n), 0),
    unexpected: Number(out.match(/unexpected statuses: (\d+)/)?.[1] ?? 0),
    cpuUs: requests > 0 ? (cpu * 1e6) / requests : NaN
  }
}

const getKeys = (pid: number, base: string, key: string) => wrk(pid, ["-H", `Authorization: Bearer ${key}`, `${base}/api/v1/keys`])
const postProofs = (pid: number, base: string, keysFile: string) =>
  wrk(pid, ["-s", lua, `${base}/api/v1/proofs`, "--", keysFile, String(THREADS), "202", "POST", "/api/v1/proofs", PROOF_BODY])

/** wrk's "16.82ms", "1.02s", "850.00us" → milliseconds. */
const millis = (text: string) => {
  const [, n, unit] = text.match(/^([\d.]+)(us|ms|s|m)$/) ?? []
  return Number(n) * ({ us: 0.001, ms: 1, s: 1_000, m: 60_000 }[unit ?? ""] ?? NaN)
}

try {
  // Keys for warm-up plus measurement at the rate cap, each key used at most 60 times, so no
  // request can meet a limit even within one clock minute; each server gets its own accounts.
  const accountsPerServer = Math.ceil((RATE_CAP * 2 * DURATION) / (REQUESTS_PER_KEY * KEYS_PER_ACCOUNT)) + THREADS
  const [getAccount, ...pool] = await createAccounts(1 + 2 * accountsPerServer)
  start(["packages/server/src/cli.ts", "serve", "--port", "18090", "--database", `sqlite:${file}`, "--no-workers"])
  start(["packages/server/bench/baselineServer.ts", file, "18091"])
  for (const { base } of servers) await waitFor(`${base}/`)
  const pools = await Promise.all(servers.map(async (_, i) => {
    const accounts = pool.slice(i * accountsPerServer, (i + 1) * accountsPerServer)
    const keysFile = join(dir, `keys-${i}.txt`)
    writeFileSync(keysFile, (await fillKeys(servers[0].base, accounts)).join("\n") + "\n")
    return { accounts: new Set(accounts.map((a) => a.account_id)), keysFile }
  }))
  await probe(getAccount!.api_key)

  const loadBefore = loadavg()
  const results = servers.map(({ base }, i) => {
    const pid = children[i]!.pid!
    // Warm both (JIT, SQLite page cache) before measuring; the POST warm-up is checked too.
    getKeys(pid, base, getAccount!.api_key)
    const get = getKeys(pid, base, getAccount!.api_key)
    const warm = postProofs(pid, base, pools[i]!.keysFile)
    const post = postProofs(pid, base, pools[i]!.keysFile)
    return {
      get,
      post,
      postRequests: warm.requests + post.requests,
      postUnexpected: warm.unexpected + post.unexpected,
      postSocketErrors: warm.socketErrors + post.socketErrors
    }
  })
  const loadAfter = loadavg()

  const keyCount = accountsPerServer * KEYS_PER_ACCOUNT
  const load = (l: Array<number>) => l.map((n) => n.toFixed(2)).join(" ")
  console.log(`HTTP benchmark: wrk -t${THREADS} -c${values.connections}, ${DURATION} s per measurement after a ${DURATION} s warm-up, ` +
    `loopback, ${execFileSync("nproc").toString().trim()} cores; load average ${load(loadBefore)} before, ${load(loadAfter)} after`)
  if (PIN) console.log("Pinned: servers on core 0, wrk on core 1. For CPU per request; the targets are measured unpinned.")
  console.log(`POST body ${PROOF_BODY}: proofs are admitted, charged and queued, not proved (mzk serve --no-workers).`)
  console.log(`Rate limits on: each server rotates over its own ${keyCount.toLocaleString("en")} keys (${accountsPerServer} accounts), ` +
    `room for ${(keyCount * REQUESTS_PER_KEY).toLocaleString("en")} requests (${RATE_CAP.toLocaleString("en")} req/s for ${2 * DURATION} s).`)
  console.log("")
  console.log("endpoint             server            req/s   p50        p99        CPU/req   non-2xx  socket errors  mzk / hand-written")
  const endpoints = [["GET /api/v1/keys", "get"], ["POST /api/v1/proofs", "post"]] as const
  for (const [endpoint, which] of endpoints) {
    servers.forEach(({ name }, i) => {
      const r = results[i]![which]
      const share = i === 0 ? `${((r.rps / results[1]![which].rps) * 100).toFixed(0)}%` : ""
      console.log(`${endpoint.padEnd(20)} ${name.padEnd(16)} ${r.rps.toFixed(0).padStart(6)}   ${r.p50.padEnd(10)} ${r.p99.padEnd(10)} ` +
        `${`${r.cpuUs.toFixed(0)} µs`.padEnd(9)} ` +
        `${String(r.non2xx).padEnd(8)} ${String(r.socketErrors).padEnd(14)} ${share}`.trimEnd())
    })
  }
  const get = results[0]!.get
  const met = (ok: boolean) => (ok ? "met" : "MISSED")
  console.log(`\nTargets, GET /api/v1/keys: ≥3,000 req/s (${met(get.rps >= 3_000)}), p99 < 25 ms at 32 connections ` +
    `(${values.connections === "32" ? met(millis(get.p99) < 25) : "not measured at 32"}), ` +
    `≥50% of hand-written (${met(get.rps >= results[1]!.get.rps / 2)})`)
  console.log(`Share, POST /api/v1/proofs: ≥50% of hand-written (${met(results[0]!.post.rps >= results[1]!.post.rps / 2)})`)

  // Every 202 must have queued a proof row in that server's own accounts, and nothing else may
  // have: beyond the 202s counted, only requests in flight when wrk stopped (one per connection).
  const db = new Database(file, { readonly: true })
  const rows = db.prepare("select account_id, count(*) as n from proofs group by account_id").all() as Array<{ account_id: string; n: number }>
  db.close()
  const failures: Array<string> = []
  const queuedLine: Array<string> = []
  servers.forEach(({ name }, i) => {
    const r = results[i]!
    const queued = rows.filter((row) => pools[i]!.accounts.has(row.account_id)).reduce((sum, row) => sum + row.n, 0)
    if (r.postUnexpected > 0) failures.push(`${name}: ${r.postUnexpected} of ${r.postRequests} POST answers (warm-up included) were not 202`)
    const accepted = r.postRequests - r.postUnexpected
    queuedLine.push(`${name} ${queued.toLocaleString("en")} for ${accepted.toLocaleString("en")} answers 202`)
    if (queued < accepted) failures.push(`${name}: ${accepted} POSTs answered 202 but only ${queued} proofs queued`)
    if (queued > accepted + 2 * Number(values.connections) + r.postSocketErrors) {
      failures.push(`${name}: ${queued} proofs queued for ${accepted} POSTs answered 202`)
    }
  })
  console.log(`Proofs queued in the database (warm-up included): ${queuedLine.join(", ")}`)
  if (failures.length > 0) {
    console.error(`\nFAIL: the POST numbers are not a measurement of queued proofs:\n  ${failures.join("\n  ")}`)
    process.exitCode = 1
  }
} finally {
  for (const child of children) child.kill("SIGTERM")
  rmSync(dir, { recursive: true, force: true })
}
