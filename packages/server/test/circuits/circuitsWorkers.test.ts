import { describePostgres, freshDatabaseUrl } from "@mzk/adapters-postgres/testing"
import { prepareDevelopmentPtau } from "@mzk/proving"
import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import { DEV_PTAU_POWER, settle, uploadCircuit } from "./circuits.js"
import { createAccount, mzkProcess, serveProcess } from "../processes.js"

/** Processes whose parent is `pid`: a worker's build job while it builds. */
const childrenOf = (pid: number) =>
  readdirSync("/proc").filter((entry) => /^\d+$/.test(entry)).filter((entry) => {
    try {
      // Fields after the command name (which may hold spaces) start after its closing parenthesis.
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8")
      return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === pid
    } catch {
      return false
    }
  })

const alive = (pid: string) => existsSync(`/proc/${pid}`) && !readFileSync(`/proc/${pid}/stat`, "utf8").includes(") Z ")

describePostgres("accounts' circuits built by `mzk worker` processes on one Postgres database", () => {
  it.scopedLive("two workers build each upload once; a SIGKILLed build is taken over; a worker with an empty cache proves", () =>
    Effect.gen(function*() {
      const { url } = yield* freshDatabaseUrl
      const dir = mkdtempSync(join(tmpdir(), "mzk-workers-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
      const options = { timeoutMs: 120_000, memoryBytes: 2 ** 31, developmentPtau: { power: DEV_PTAU_POWER, dir } }
      // Made once here, so every build below is compiling and setting up, not making a ptau.
      yield* prepareDevelopmentPtau(options)
      const workerArgs = (cache: string) => [
        "worker", "--database", url, "--dev-ptau", "--dev-ptau-power", String(DEV_PTAU_POWER), "--dev-ptau-dir", dir,
        "--cache-dir", join(dir, cache), "--build-timeout", "20"
      ]

      // The API server takes the workers' circuit settings: it decides at upload what setup a circuit gets.
      const server = yield* serveProcess(url, {
        args: ["--no-workers", "--max-compiling-per-account", "4", "--dev-ptau", "--dev-ptau-power", String(DEV_PTAU_POWER), "--dev-ptau-dir", dir]
      })
      const { api_key } = createAccount(url, "Workers")
      const api = server.client(api_key)
      const query = async (sql: string) => {
        const client = new pg.Client({ connectionString: url })
        await client.connect()
        try {
          return (await client.query(sql)).rows
        } finally {
          await client.end()
        }
      }

      const first = yield* mzkProcess(workerArgs("cache-a"))
      const second = yield* mzkProcess(workerArgs("cache-b"))
      const names = ["one", "two", "three"]
      for (const name of names) expect((yield* Effect.promise(() => uploadCircuit(server.baseUrl, api_key, name))).status).toBe(202)
      for (const name of names) {
        expect(yield* Effect.promise(() => settle(api, `/api/v1/circuits/${name}`, (c) => c.status !== "compiling", 120_000))).toMatchObject({ status: "ready" })
      }
      expect(yield* Effect.promise(() => query("select name, attempts from circuits order by name"))).toEqual(
        [...names].sort().map((name) => ({ name, attempts: 1 }))
      )

      // Kill whichever worker takes the next build while its build job runs; the other takes it over after the lease.
      const upload = yield* Effect.promise(() => uploadCircuit(server.baseUrl, api_key, "taken_over"))
      expect(upload.status).toBe(202)
      const building = yield* Effect.promise(async () => {
        // A guard against a hang, bounded well inside the test's own limit: a loaded machine may take
        // tens of seconds to claim the build and start its job.
        const deadline = Date.now() + 150_000
        while (Date.now() < deadline) {
          for (const worker of [first, second]) {
            const jobs = childrenOf(worker.child.pid!)
            if (jobs.length > 0) return { worker, jobs }
          }
          await new Promise((resolve) => setTimeout(resolve, 10))
        }
        throw new Error("no worker started the build")
      })
      building.worker.child.kill("SIGKILL")
      yield* Effect.promise(() => building.worker.exited)
      const ready = yield* Effect.promise(() => settle(api, "/api/v1/circuits/taken_over", (c) => c.status !== "compiling", 120_000))
      expect(ready).toMatchObject({ status: "ready" })
      expect(yield* Effect.promise(() => query("select attempts from circuits where name = 'taken_over'"))).toEqual([{ attempts: 2 }])
      // The killed worker's build job did not outlive it.
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 500)))
      expect(building.jobs.filter(alive)).toEqual([])

      // A third worker, as on another host: nothing on its disk, the artifacts come from the database.
      for (const worker of [first, second]) if (worker.child.exitCode === null) worker.child.kill("SIGTERM")
      const fresh = join(dir, "cache-fresh")
      yield* mzkProcess(workerArgs("cache-fresh"))
      const created = yield* Effect.promise(() =>
        api.send("POST", "/api/v1/proofs", { body: { type: "taken_over", inputs: { xs: [2, 3, 4], bound: 5 } } }))
      expect(created.status).toBe(202)
      const proof = yield* Effect.promise(() => settle(api, `/api/v1/proofs/${created.json.proof_id}`, (p) => p.status === "completed" || p.status === "failed", 120_000))
      expect(proof).toMatchObject({ status: "completed", public_inputs: { total: "29", bound: "5" } })
      expect((yield* Effect.promise(() => api.send("GET", `/api/v1/proofs/${proof.proof_id}/verify`))).json.valid).toBe(true)
      expect(readdirSync(fresh, { recursive: true }).length).toBeGreaterThan(0)
    }), 400_000)
})
