import { expect, it } from "@effect/vitest"
import { eventually } from "@mzk/testkit"
import Database from "better-sqlite3"
import { Effect } from "effect"
import { describe } from "vitest"
import { createAccount, serveProcess, tempSqlite } from "../processes.js"

describe("graceful shutdown", () => {
  it.scopedLive("SIGTERM while proofs are being worked on: exit 0, no proof left running, a restart finishes them all", () =>
    Effect.gen(function*() {
      const { database, file } = yield* tempSqlite("shutdown")
      const { api_key: key } = createAccount(database, "Shutdown")
      const first = yield* serveProcess(database)
      const client = first.client(key)
      const call = (method: string, path: string, body?: unknown) => Effect.promise(() => client.send(method, path, { body }))

      const batch = yield* call("POST", "/api/v1/proofs/batch", {
        proofs: Array.from({ length: 40 }, (_, i) => ({ type: "multiplier", inputs: { a: String(i + 2), b: "7" } }))
      })
      expect(batch.status).toBe(202)
      const ids = (batch.json.proofs as Array<{ proof_id: string }>).map((p) => p.proof_id)
      // Wait until the worker is busy, then stop the server in the middle of the batch.
      yield* Effect.promise(() =>
        eventually(async () => ((await client.send("GET", "/api/v1/proofs?status=running")).json.proofs.length > 0 ? true : undefined), 30_000, 10)
      )
      first.child.kill("SIGTERM")
      const exit = yield* Effect.promise(() => first.exited).pipe(Effect.timeout("30 seconds"))
      expect(exit).toEqual({ code: 0, signal: null })

      const db = new Database(file, { readonly: true })
      const statuses = db.prepare("select status, count(*) as n from proofs group by status").all() as Array<{ status: string; n: number }>
      db.close()
      expect(statuses.map((s) => s.status).sort()).not.toContain("running")
      expect(statuses.reduce((sum, s) => sum + s.n, 0)).toBe(40)

      // Nothing was lost: a new server picks up what the first one did not finish.
      const restarted = (yield* serveProcess(database)).client(key)
      yield* Effect.promise(() =>
        eventually(async () => {
          const listed = await restarted.send("GET", "/api/v1/proofs?status=completed&limit=100")
          return listed.json.proofs.length === ids.length ? true : undefined
        }, 60_000, 50)
      )
    }), 180_000)
})
