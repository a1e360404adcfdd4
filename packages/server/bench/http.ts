/**
 * HTTP benchmark (a script, not a test): wrk against mzk and against a hand-written node:http +
 * better-sqlite3 server doing the same work, in one run, on loopback only.
 *
 *   pnpm exec tsx packages/server/bench/http.ts [--duration 10] [--connections 32]
 *
 * Needs Debian's wrk (apt-get install wrk). Prints req/s and p50/p99 latency per server.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { parseArgs } from "node:util"

const { values } = parseArgs({
  options: { duration: { type: "string", default: "10" }, connections: { type: "string", default: "32" } }
})
const root = new URL("../../..", import.meta.url).pathname
const dir = mkdtempSync(join(tmpdir(), "mzk-bench-"))
const database = `sqlite:${join(dir, "mzk.db")}`
const children: Array<ChildProcess> = []

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

const start = (args: Array<string>) => {
  const child = spawn(process.execPath, ["--import", "tsx", ...args], { cwd: root, stdio: ["ignore", "ignore", "inherit"] })
  children.push(child)
  return child
}

interface Result { readonly rps: number; readonly p50: string; readonly p99: string; readonly non2xx: number }

const wrk = (url: string, key: string): Result => {
  const out = execFileSync("wrk", [
    "-t2", `-c${values.connections}`, `-d${values.duration}s`, "--latency", "-H", `Authorization: Bearer ${key}`, url
  ], { encoding: "utf8" })
  const latency = (p: string) => out.match(new RegExp(`^\\s+${p}%\\s+(\\S+)`, "m"))?.[1] ?? "?"
  return {
    rps: Number(out.match(/Requests\/sec:\s+([\d.]+)/)?.[1] ?? 0),
    p50: latency("50"),
    p99: latency("99"),
    non2xx: Number(out.match(/Non-2xx or 3xx responses:\s+(\d+)/)?.[1] ?? 0)
  }
}

try {
  execFileSync(process.execPath, ["--import", "tsx", "packages/server/src/cli.ts", "migrate", "--database", database], { cwd: root })
  const created = JSON.parse(execFileSync(process.execPath, [
    "--import", "tsx", "packages/server/src/cli.ts", "accounts", "create", "--name", "bench", "--database", database, "--json"
  ], { cwd: root, encoding: "utf8" })) as { api_key: string }
  start(["packages/server/src/cli.ts", "serve", "--port", "18090", "--database", database, "--no-workers"])
  start(["packages/server/bench/baselineServer.ts", join(dir, "mzk.db"), "18091"])
  await waitFor("http://127.0.0.1:18090/api/v1/openapi.json")
  await waitFor("http://127.0.0.1:18091/")
  // Warm both (JIT, SQLite page cache) before measuring.
  for (const port of [18090, 18091]) wrk(`http://127.0.0.1:${port}/api/v1/keys`, created.api_key)
  const mzk = wrk("http://127.0.0.1:18090/api/v1/keys", created.api_key)
  const baseline = wrk("http://127.0.0.1:18091/api/v1/keys", created.api_key)
  console.log(`GET /api/v1/keys, ${values.connections} connections, ${values.duration} s, wrk -t2 (loopback, ${execFileSync("nproc").toString().trim()} cores)`)
  console.log("server            req/s     p50       p99       non-2xx")
  for (const [name, r] of [["mzk", mzk], ["node:http+sqlite", baseline]] as const) {
    console.log(`${name.padEnd(17)} ${r.rps.toFixed(0).padStart(8)}  ${r.p50.padEnd(9)} ${r.p99.padEnd(9)} ${r.non2xx}`)
  }
  console.log(`mzk / hand-written throughput: ${((mzk.rps / baseline.rps) * 100).toFixed(0)}%`)
} finally {
  for (const child of children) child.kill("SIGTERM")
  rmSync(dir, { recursive: true, force: true })
}
