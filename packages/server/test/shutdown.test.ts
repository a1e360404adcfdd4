import { expect, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { Effect } from "effect"
import { type ChildProcess, execFileSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe } from "vitest"
import { freePort, root, serveProcess } from "./clients.js"

const exited = (child: ChildProcess) =>
  new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })))

describe("graceful shutdown", () => {
  it.scopedLive("SIGTERM while proofs are being worked on: exit 0, no proof left running, a restart finishes them all", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "mzk-shutdown-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
      const file = join(dir, "mzk.db")
      const database = `sqlite:${file}`
      const { api_key: key } = JSON.parse(execFileSync(process.execPath,
        ["--import", "tsx", "packages/server/src/cli.ts", "accounts", "create", "--name", "Shutdown", "--database", database, "--json"],
        { cwd: root, encoding: "utf8" })) as { api_key: string }
      const port = yield* Effect.promise(freePort)
      const base = `http://127.0.0.1:${port}/api/v1`
      const children: Array<ChildProcess> = []
      yield* Effect.addFinalizer(() => Effect.sync(() => children.forEach((c) => c.kill("SIGKILL"))))
      const call = (method: string, path: string, body?: unknown) =>
        Effect.promise(async () => {
          for (let i = 0; ; i++) {
            try {
              const response = await fetch(`${base}${path}`, {
                method,
                headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
                ...(body === undefined ? {} : { body: JSON.stringify(body) })
              })
              return { status: response.status, json: await response.json() as any }
            } catch (error) {
              if (i > 300) throw error
              await new Promise((resolve) => setTimeout(resolve, 50))
            }
          }
        })

      const first = serveProcess(database, port)
      children.push(first)
      const batch = yield* call("POST", "/proofs/batch", {
        proofs: Array.from({ length: 40 }, (_, i) => ({ type: "multiplier", inputs: { a: String(i + 2), b: "7" } }))
      })
      expect(batch.status).toBe(202)
      const ids = (batch.json.proofs as Array<{ proof_id: string }>).map((p) => p.proof_id)
      // Wait until the worker is busy, then stop the server in the middle of the batch.
      yield* Effect.promise(async () => {
        for (let i = 0; i < 400; i++) {
          const running = await fetch(`${base}/proofs?status=running`, { headers: { authorization: `Bearer ${key}` } })
          if (((await running.json()) as { proofs: Array<unknown> }).proofs.length > 0) return
          await new Promise((resolve) => setTimeout(resolve, 10))
        }
        throw new Error("no proof was ever running")
      })
      const stopped = exited(first)
      first.kill("SIGTERM")
      const exit = yield* Effect.promise(() => stopped).pipe(Effect.timeout("15 seconds"))
      expect(exit).toEqual({ code: 0, signal: null })

      const db = new Database(file, { readonly: true })
      const statuses = db.prepare("select status, count(*) as n from proofs group by status").all() as Array<{ status: string; n: number }>
      db.close()
      expect(statuses.map((s) => s.status).sort()).not.toContain("running")
      expect(statuses.reduce((sum, s) => sum + s.n, 0)).toBe(40)

      // Nothing was lost: a new server picks up what the first one did not finish.
      children.push(serveProcess(database, port))
      yield* Effect.promise(async () => {
        for (let i = 0; i < 600; i++) {
          try {
            const listed = await fetch(`${base}/proofs?status=completed&limit=100`, { headers: { authorization: `Bearer ${key}` } })
            if (((await listed.json()) as { proofs: Array<unknown> }).proofs.length === ids.length) return
          } catch { /* not up yet */ }
          await new Promise((resolve) => setTimeout(resolve, 50))
        }
        throw new Error("the restarted server did not finish the batch")
      })
    }), 90_000)
})
