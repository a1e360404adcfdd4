import { expect, it } from "@effect/vitest"
import { Accounts, ApiKeys } from "@mzk/core"
import { Effect, Redacted } from "effect"
import { execFile } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { makeHttpClient } from "@mzk/testkit"
import { describe } from "vitest"
import { root } from "../processes.js"
import { startServer } from "../realServer.js"

const writer = fileURLToPath(new URL("../fixtures/sqliteWriter.ts", import.meta.url))

/** The fixture as its own OS process: its report, or its output if it had none. */
const secondWriter = (file: string, durationMs: number) =>
  new Promise<{ ok: number; errors: Array<string> }>((resolve, reject) => {
    execFile(process.execPath, ["--import", "tsx", writer, file, String(durationMs)], { cwd: root, encoding: "utf8" }, (error, stdout, stderr) => {
      try {
        resolve(JSON.parse(stdout.trim().split("\n").at(-1) ?? "") as { ok: number; errors: Array<string> })
      } catch {
        reject(new Error(`writer gave no report (${String(error)}): ${stdout} ${stderr}`))
      }
    })
  })

describe("two processes writing one SQLite file", () => {
  it.scopedLive("a second process creates accounts and keys while the server writes under load: no lock error, no 503", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "mzk-two-writers-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
      const file = join(dir, "mzk.db")
      const { baseUrl, context } = yield* startServer({ database: { kind: "sqlite", filename: file }, allowInsecureWebhooks: true })
      const key = yield* Effect.gen(function*() {
        const account = yield* (yield* Accounts).create({ name: "Load" })
        return Redacted.value((yield* (yield* ApiKeys).create(account.id, { name: "k" })).secret)
      }).pipe(Effect.provide(context))

      // Six clients create and delete webhooks as fast as the server answers.
      const statuses = new Map<number, number>()
      let stop = false
      const count = (status: number) => statuses.set(status, (statuses.get(status) ?? 0) + 1)
      const client = async (n: number) => {
        const http = makeHttpClient(baseUrl, { token: key })
        while (!stop) {
          const created = await http.send("POST", "/api/v1/webhooks", { body: { url: `http://127.0.0.1:9/hook/${n}`, events: ["key.created"] } })
          count(created.status)
          const id = (created.json as { id?: string } | undefined)?.id
          if (id !== undefined) count((await http.send("DELETE", `/api/v1/webhooks/${id}`)).status)
        }
      }
      const load = Promise.all([0, 1, 2, 3, 4, 5].map(client))
      const report = yield* Effect.promise(() => secondWriter(file, 2_000).finally(() => void (stop = true)))
      yield* Effect.promise(() => load)

      expect(report.errors).toEqual([])
      expect(report.ok).toBeGreaterThan(20)
      expect(Object.fromEntries(statuses)).toEqual({ 201: expect.any(Number), 204: expect.any(Number) })
      expect(statuses.get(201)).toBeGreaterThan(50)
    }), 60_000)
})
