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
 *
 * Before measuring, one request of each kind goes to both servers and the answers must be alike
 * (sameAnswer.ts: status, headers and body, ids and timestamps masked), and so must the two proof
 * rows the POSTs stored; any difference stops the run, printed. `--smoke` is the check CI runs
 * (scripts/test/benchSmoke.test.ts): the same run with one 1-second measurement per endpoint and
 * server and no warm-up, its numbers meaningless; it fails where the bench cannot run or the two
 * servers answer differently. With `--mixed`, `--smoke` proves with the native engine only, once.
 * `--rounds N` measures each endpoint N times per server, the servers taking turns (mzk first in
 * odd rounds, second in even ones), so that both meet the same load on a shared machine; the table
 * shows each server's median round, the range of its CPU per request, and the median of the
 * rounds' CPU ratios, mzk's over hand-written, against the target of at most 1.3.
 * `--cpu-prof <folder>` writes mzk's CPU profile of the whole run there (Node's --cpu-prof; open it
 * in Chrome's DevTools, Performance tab, for the flame graph).
 *
 * `--mixed` measures instead whether the API keeps its latency while the same process proves on
 * every core: `mzk serve` WITH its proof worker (the prover pool on all cores), GET /api/v1/keys
 * under wrk (32 connections), first idle, then while the pool proves merkle_membership proofs
 * (a batch of 100 queued first, then topped up so the queue never runs dry during the
 * measurement), once per engine in `--engines` (default snarkjs,native; MZK_PROVER_ENGINE) and
 * prover thread priority in `--priority` (default low; MZK_PROVER_PRIORITY). Every configuration runs
 * `--repeat` times (default 3), interleaved, and the table shows medians (p99 with its range):
 * on a shared machine one run says little. Target: p99 < 25 ms with the native engine.
 */
import { Accounts, ApiKeys } from "@mzk/core"
import Database from "better-sqlite3"
import { Effect, Redacted } from "effect"
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { parseArgs } from "node:util"
import { CoreServicesLive } from "../src/mzk.js"
import { type Answer, differences } from "./sameAnswer.js"

const { values } = parseArgs({
  options: {
    duration: { type: "string", default: "10" },
    connections: { type: "string", default: "32" },
    "post-rate-cap": { type: "string", default: "8000" },
    pin: { type: "boolean", default: false },
    mixed: { type: "boolean", default: false },
    engines: { type: "string", default: "snarkjs,native" },
    priority: { type: "string", default: "low" },
    repeat: { type: "string", default: "3" },
    smoke: { type: "boolean", default: false },
    "cpu-prof": { type: "string" },
    rounds: { type: "string", default: "1" }
  }
})
const SMOKE = values.smoke
const PIN = values.pin
const DURATION = SMOKE ? 1 : Number(values.duration)
const RATE_CAP = SMOKE ? 4000 : Number(values["post-rate-cap"])
const ROUNDS = SMOKE ? 1 : Number(values.rounds)
if (!(DURATION > 0 && DURATION <= 600 && RATE_CAP > 0)) throw new Error("--duration must be 1 to 600 seconds and --post-rate-cap positive")
if (!(Number.isInteger(ROUNDS) && ROUNDS >= 1 && ROUNDS <= 50)) throw new Error("--rounds must be 1 to 50")
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

/** Until `url` answers; a server that exits first, or takes over a minute (a loaded machine starts tsx slowly), fails the run. */
const waitFor = async (url: string, child?: ChildProcess) => {
  for (let i = 0; i < 600; i++) {
    if (child !== undefined && child.exitCode !== null) throw new Error(`the server for ${url} exited with ${child.exitCode} before answering`)
    try {
      await fetch(url)
      return
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
  throw new Error(`${url} did not come up within a minute`)
}

/** `command` on the core given when --pin is set. */
const pinned = (core: number, command: string, args: Array<string>): [string, Array<string>] =>
  PIN ? ["taskset", ["-c", String(core), command, ...args]] : [command, args]

const start = (args: Array<string>, nodeOptions: Array<string> = []) => {
  const child = spawn(...pinned(0, process.execPath, [...nodeOptions, "--import", "tsx", ...args]), { cwd: root, stdio: ["ignore", "ignore", "inherit"] })
  children.push(child)
  return child
}

interface Account { readonly account_id: string; readonly api_key: string }

/**
 * Accounts with their first key, through mzk's own services: what `mzk accounts create` runs, in
 * this process, because one CLI process per account costs seconds each and the pool needs hundreds.
 */
const createAccounts = (count: number, filename: string = file) =>
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
  }).pipe(Effect.provide(CoreServicesLive({ database: { kind: "sqlite", filename } }))))

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

const answerOf = async (response: Response): Promise<Answer> =>
  ({ status: response.status, headers: Object.fromEntries(response.headers), body: await response.text() })

/**
 * The benchmarked requests, once to each server, compared: the key listing of one account (the
 * same rows for both), and each server's first proof request of an account of its own (so each
 * proof is first in its queue), with the proof rows they stored. Throws with both sides printed.
 */
const probe = async (listKey: string, proofKeys: ReadonlyArray<string>) => {
  const same = (what: string, answers: ReadonlyArray<{ name: string; answer: Answer }>, status: number) => {
    const differ = differences(answers)
    if (differ !== undefined) throw new Error(`${what} answers differ:\n${differ}`)
    if (answers[0]!.answer.status !== status) throw new Error(`${what} answered ${answers[0]!.answer.status}: ${answers[0]!.answer.body}`)
  }
  const listed = await Promise.all(servers.map(async ({ name, base }) => ({
    name,
    answer: await answerOf(await fetch(`${base}/api/v1/keys`, { headers: { authorization: `Bearer ${listKey}` } }))
  })))
  same("GET /api/v1/keys", listed, 200)
  const created = await Promise.all(servers.map(async ({ name, base }, i) => ({
    name,
    answer: await answerOf(await fetch(`${base}/api/v1/proofs`, {
      method: "POST",
      headers: { authorization: `Bearer ${proofKeys[i]}`, "content-type": "application/json" },
      body: PROOF_BODY
    }))
  })))
  same("POST /api/v1/proofs", created, 202)
  const db = new Database(file, { readonly: true })
  const row = db.prepare("select * from proofs where id = ?")
  const rows = created.map(({ name, answer }) => ({
    name,
    answer: { status: 0, headers: {}, body: JSON.stringify(row.get((JSON.parse(answer.body) as { proof_id: string }).proof_id) ?? null) }
  }))
  db.close()
  same("The proof rows POST /api/v1/proofs stored", rows, 0)
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

/**
 * --mixed: GET /api/v1/keys latency while the server's own prover pool proves on every core.
 * Each engine (and nice value) gets a fresh server and database.
 */
const mixedMode = async () => {
  const base = "http://127.0.0.1:18092"
  const proofBody = readFileSync(new URL("merkle-input.json", import.meta.url), "utf8").trim()
  const priorities = values.priority.split(",")
  const engines = SMOKE ? ["native"] : values.engines.split(",")
  // A smoke run queues a few proofs, not a hundred: it checks the mode runs, not what it measures.
  const [firstBatch, topUp] = SMOKE ? [4, 2] : [100, 24]
  const configs = [
    ...(SMOKE ? [] : [{ label: "no proving", engine: "native", priority: priorities[0]!, prove: false }]),
    ...engines.flatMap((engine) => priorities.map((priority) => ({ label: `${engine}, ${priority}`, engine, priority, prove: true })))
  ]
  const results = configs.map(() => [] as Array<{ get: Result; proofsPerSecond: number; busy: boolean; engineLine: string }>)
  const repeat = SMOKE ? 1 : Math.max(1, Number(values.repeat))
  let index = 0
  for (let rep = 0; rep < repeat; rep++) {
    for (const [c, run] of configs.entries()) {
      const filename = join(dir, `mixed-${index++}.db`)
      const accounts = await createAccounts(5, filename)
      const server = spawn(process.execPath, ["--import", "tsx", "packages/server/src/cli.ts", "serve", "--port", "18092", "--database", `sqlite:${filename}`], {
        cwd: root,
        stdio: ["ignore", "pipe", "inherit"],
        env: { ...process.env, MZK_PROVER_ENGINE: run.engine, MZK_PROVER_PRIORITY: run.priority }
      })
      children.push(server)
      let engineLine = ""
      server.stdout!.on("data", (chunk: Buffer) => {
        const line = /prover engine: [^"]*/.exec(String(chunk))
        if (line !== null) engineLine = line[0]
      })
      try {
        await waitFor(`${base}/`, server)
        const keys = await fillKeys(base, accounts)
        const db = new Database(filename, { readonly: true })
        const count = (status: string) => (db.prepare("select count(*) as n from proofs where status = ?").get(status) as { n: number }).n
        let next = 0
        const submit = async (n: number) => {
          await Promise.all(Array.from({ length: n }, async () => {
            const response = await fetch(`${base}/api/v1/proofs`, {
              method: "POST",
              headers: { authorization: `Bearer ${keys[next++ % keys.length]}`, "content-type": "application/json" },
              body: proofBody
            })
            if (response.status !== 202) throw new Error(`POST /api/v1/proofs answered ${response.status}: ${await response.text()}`)
          }))
        }
        // The feeder keeps proofs queued, so the pool never idles while wrk measures.
        let feeding = run.prove
        let minQueued = Infinity
        let measuring = false
        const feeder = (async () => {
          if (!run.prove) return
          await submit(firstBatch)
          while (feeding) {
            const queued = count("queued")
            if (measuring) minQueued = Math.min(minQueued, queued)
            if (queued < topUp) await submit(topUp)
            await new Promise((resolve) => setTimeout(resolve, 100))
          }
        })()
        // Let the pool get going (and its JIT warm) before the warm-up run.
        if (run.prove) while (count("completed") < 2) await new Promise((resolve) => setTimeout(resolve, 100))
        getKeys(server.pid!, base, accounts[0]!.api_key)
        const doneBefore = count("completed")
        measuring = true
        const t = performance.now()
        const get = getKeys(server.pid!, base, accounts[0]!.api_key)
        const seconds = (performance.now() - t) / 1000
        measuring = false
        const proved = count("completed") - doneBefore
        feeding = false
        await feeder
        db.close()
        results[c]!.push({ get, proofsPerSecond: proved / seconds, busy: minQueued > 0, engineLine })
      } finally {
        server.kill("SIGTERM")
        await new Promise((resolve) => server.once("exit", resolve))
      }
    }
  }
  const med = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
  console.log(`Mixed mode: GET /api/v1/keys under wrk -t${THREADS} -c${values.connections}, ${DURATION} s after a ${DURATION} s warm-up, while mzk serve ` +
    `(with its proof worker, prover pool on all ${execFileSync("nproc").toString().trim()} cores) proves merkle_membership; medians of ${repeat} ` +
    `interleaved runs each; load average ${loadavg().map((n) => n.toFixed(2)).join(" ")}`)
  console.log("")
  console.log("prover               req/s    p50        p99 (range)                errors   proofs/s   queue never empty")
  for (const [c, run] of configs.entries()) {
    const rs = results[c]!
    const p99s = rs.map((r) => millis(r.get.p99))
    const errors = rs.reduce((n, r) => n + r.get.non2xx + r.get.socketErrors, 0)
    const busy = run.prove ? (rs.every((r) => r.busy) ? "yes" : "no (ran dry)") : "–"
    console.log(
      `${run.label.padEnd(20)} ${med(rs.map((r) => r.get.rps)).toFixed(0).padStart(6)}   ${`${med(rs.map((r) => millis(r.get.p50))).toFixed(2)}ms`.padEnd(10)} ` +
        `${`${med(p99s).toFixed(2)}ms (${Math.min(...p99s).toFixed(1)}–${Math.max(...p99s).toFixed(1)})`.padEnd(26)} ${String(errors).padEnd(8)} ` +
        `${(run.prove ? med(rs.map((r) => r.proofsPerSecond)).toFixed(2) : "–").padStart(8)}   ${busy}`
    )
  }
  for (const [c, run] of configs.entries()) if (run.prove) console.log(`  ${run.label}: ${results[c]![0]!.engineLine}`)
  const native = configs.map((run, c) => ({ run, c })).filter(({ run }) => run.prove && run.engine === "native")
  for (const { run, c } of native) {
    const p99 = med(results[c]!.map((r) => millis(r.get.p99)))
    console.log(`Target, ${run.label}: p99 < 25 ms while proving on every core (${p99 < 25 ? "met" : "MISSED"})`)
  }
}

if (values.mixed) {
  try {
    await mixedMode()
  } finally {
    for (const child of children) child.kill("SIGTERM")
    rmSync(dir, { recursive: true, force: true })
  }
  process.exit(process.exitCode ?? 0)
}

try {
  // Keys for warm-up plus measurement at the rate cap, each key used at most 60 times, so no
  // request can meet a limit even within one clock minute; each server gets its own accounts.
  const accountsPerServer = Math.ceil((RATE_CAP * (ROUNDS + 1) * DURATION) / (REQUESTS_PER_KEY * KEYS_PER_ACCOUNT)) + THREADS
  const [getAccount, ...rest] = await createAccounts(1 + servers.length + 2 * accountsPerServer)
  const probeAccounts = rest.slice(0, servers.length)
  const pool = rest.slice(servers.length)
  const profile = values["cpu-prof"] === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${values["cpu-prof"]}`]
  start(["packages/server/src/cli.ts", "serve", "--port", "18090", "--database", `sqlite:${file}`, "--no-workers"], profile)
  start(["packages/server/bench/baselineServer.ts", file, "18091"])
  for (const [i, { base }] of servers.entries()) await waitFor(`${base}/`, children[i])
  const pools = await Promise.all(servers.map(async (_, i) => {
    const accounts = pool.slice(i * accountsPerServer, (i + 1) * accountsPerServer)
    const keysFile = join(dir, `keys-${i}.txt`)
    writeFileSync(keysFile, (await fillKeys(servers[0].base, accounts)).join("\n") + "\n")
    return { accounts: new Set(accounts.map((a) => a.account_id)), keysFile }
  }))
  await probe(getAccount!.api_key, probeAccounts.map((account) => account.api_key))

  const loadBefore = loadavg()
  const measure = {
    get: (i: number) => getKeys(children[i]!.pid!, servers[i]!.base, getAccount!.api_key),
    post: (i: number) => postProofs(children[i]!.pid!, servers[i]!.base, pools[i]!.keysFile)
  }
  // Warm both (JIT, SQLite page cache) before measuring; the POST warm-up is checked too.
  const posts: Array<Array<Result>> = servers.map(() => [])
  if (!SMOKE) {
    servers.forEach((_, i) => measure.get(i))
    servers.forEach((_, i) => posts[i]!.push(measure.post(i)))
  }
  const rounds = { get: servers.map(() => [] as Array<Result>), post: servers.map(() => [] as Array<Result>) }
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? servers.map((_, i) => i) : servers.map((_, i) => servers.length - 1 - i)
    for (const which of ["get", "post"] as const) for (const i of order) rounds[which][i]!.push(measure[which](i))
  }
  const medianOf = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
  /** A server's round of median CPU per request: its req/s and latencies go with it. */
  const medianRound = (rs: ReadonlyArray<Result>) => [...rs].sort((a, b) => a.cpuUs - b.cpuUs)[Math.floor(rs.length / 2)]!
  const results = servers.map((_, i) => {
    const all = [...posts[i]!, ...rounds.post[i]!]
    return {
      get: medianRound(rounds.get[i]!),
      post: medianRound(rounds.post[i]!),
      postRuns: all.length,
      postRequests: all.reduce((n, r) => n + r.requests, 0),
      postUnexpected: all.reduce((n, r) => n + r.unexpected, 0),
      postSocketErrors: all.reduce((n, r) => n + r.socketErrors, 0)
    }
  })
  const cpuRange = (which: "get" | "post", i: number) => {
    const cpus = rounds[which][i]!.map((r) => r.cpuUs)
    return ROUNDS === 1 ? `${cpus[0]!.toFixed(0)} µs` : `${medianOf(cpus).toFixed(0)} µs (${Math.min(...cpus).toFixed(0)}–${Math.max(...cpus).toFixed(0)})`
  }
  /** The median over rounds of mzk's CPU per request over hand-written's in the same round. */
  const cpuRatio = (which: "get" | "post") => medianOf(rounds[which][0]!.map((r, round) => r.cpuUs / rounds[which][1]![round]!.cpuUs))
  const loadAfter = loadavg()

  const keyCount = accountsPerServer * KEYS_PER_ACCOUNT
  const load = (l: Array<number>) => l.map((n) => n.toFixed(2)).join(" ")
  console.log(`HTTP benchmark: wrk -t${THREADS} -c${values.connections}, ${DURATION} s per measurement ${SMOKE ? "(smoke run: no warm-up, the numbers mean nothing)" : `after a ${DURATION} s warm-up`}, ` +
    `loopback, ${execFileSync("nproc").toString().trim()} cores; load average ${load(loadBefore)} before, ${load(loadAfter)} after`)
  if (PIN) console.log("Pinned: servers on core 0, wrk on core 1. For CPU per request; the targets are measured unpinned.")
  console.log(`POST body ${PROOF_BODY}: proofs are admitted, charged and queued, not proved (mzk serve --no-workers).`)
  console.log(`Rate limits on: each server rotates over its own ${keyCount.toLocaleString("en")} keys (${accountsPerServer} accounts), ` +
    `room for ${(keyCount * REQUESTS_PER_KEY).toLocaleString("en")} requests (${RATE_CAP.toLocaleString("en")} req/s for ${(ROUNDS + 1) * DURATION} s).`)
  console.log("")
  if (ROUNDS > 1) console.log(`${ROUNDS} rounds, the servers taking turns; each row is the server's round of median CPU per request.`)
  console.log("endpoint             server            req/s   p50        p99        CPU/req                non-2xx  socket errors  mzk / hand-written")
  const endpoints = [["GET /api/v1/keys", "get"], ["POST /api/v1/proofs", "post"]] as const
  for (const [endpoint, which] of endpoints) {
    servers.forEach(({ name }, i) => {
      const r = results[i]![which]
      const share = i === 0 ? `${((r.rps / results[1]![which].rps) * 100).toFixed(0)}%` : ""
      console.log(`${endpoint.padEnd(20)} ${name.padEnd(16)} ${r.rps.toFixed(0).padStart(6)}   ${r.p50.padEnd(10)} ${r.p99.padEnd(10)} ` +
        `${cpuRange(which, i).padEnd(22)} ` +
        `${String(r.non2xx).padEnd(8)} ${String(r.socketErrors).padEnd(14)} ${share}`.trimEnd())
    })
  }
  const get = results[0]!.get
  const met = (ok: boolean) => (ok ? "met" : "MISSED")
  console.log(`\nTargets, GET /api/v1/keys: ≥3,000 req/s (${met(get.rps >= 3_000)}), p99 < 25 ms at 32 connections ` +
    `(${values.connections === "32" ? met(millis(get.p99) < 25) : "not measured at 32"}), ` +
    `≥50% of hand-written (${met(get.rps >= results[1]!.get.rps / 2)})`)
  console.log(`Share, POST /api/v1/proofs: ≥50% of hand-written (${met(results[0]!.post.rps >= results[1]!.post.rps / 2)})`)
  for (const [endpoint, which] of endpoints) {
    const ratio = cpuRatio(which)
    console.log(`CPU per request, ${endpoint}: mzk ${ratio.toFixed(2)}× hand-written (median of ${ROUNDS} round${ROUNDS > 1 ? "s" : ""}), ` +
      `target ≤ 1.3× (${met(ratio <= 1.3)})`)
  }

  // Every 202 must have queued a proof row in that server's own accounts, and nothing else may
  // have: beyond the 202s counted, only requests in flight when each wrk run stopped (one per connection).
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
    if (queued > accepted + r.postRuns * Number(values.connections) + r.postSocketErrors) {
      failures.push(`${name}: ${queued} proofs queued for ${accepted} POSTs answered 202`)
    }
  })
  console.log(`Proofs queued in the database (warm-up included): ${queuedLine.join(", ")}`)
  if (failures.length > 0) {
    console.error(`\nFAIL: the POST numbers are not a measurement of queued proofs:\n  ${failures.join("\n  ")}`)
    process.exitCode = 1
  }
} finally {
  // Each server stopped and gone before its database is removed (and mzk's profile written).
  await Promise.all(children.map((child) => {
    if (child.exitCode !== null || child.signalCode !== null) return
    const exited = new Promise((resolve) => child.once("exit", resolve))
    child.kill("SIGTERM")
    return exited
  }))
  rmSync(dir, { recursive: true, force: true })
}
