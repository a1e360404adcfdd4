import { startWebhookReceiver } from "@mzk/testkit"
import { expect, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { Effect } from "effect"
import { type ChildProcess, execFileSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe } from "vitest"
import { freePort, root, serveProcess } from "./clients.js"

const cli = (...args: Array<string>) => execFileSync(process.execPath, ["--import", "tsx", "packages/server/src/cli.ts", ...args], { cwd: root, encoding: "utf8" })

const waitUntilUp = async (baseUrl: string) => {
  for (let i = 0; i < 200; i++) {
    try {
      await fetch(`${baseUrl}/api/v1/openapi.json`)
      return
    } catch {
      await new Promise((r) => setTimeout(r, 50))
    }
  }
  throw new Error("server did not come up")
}

describe("SQLite durability", () => {
  it.scopedLive("a server killed with SIGKILL while accepting proofs and recording events loses nothing it acknowledged", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "mzk-durability-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
      const file = join(dir, "mzk.db")
      const database = `sqlite:${file}`
      const { api_key: key } = JSON.parse(cli("accounts", "create", "--name", "Durable", "--database", database, "--json")) as { api_key: string }
      const receiver = yield* startWebhookReceiver()
      const port = yield* Effect.promise(freePort)
      const baseUrl = `http://127.0.0.1:${port}`
      const children: Array<ChildProcess> = []
      yield* Effect.addFinalizer(() => Effect.sync(() => children.forEach((c) => c.kill("SIGKILL"))))
      const call = async (method: string, path: string, body?: unknown) => {
        const response = await fetch(`${baseUrl}${path}`, {
          method,
          headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
          ...(body === undefined ? {} : { body: JSON.stringify(body) })
        })
        const text = await response.text()
        return { status: response.status, json: text === "" ? undefined : JSON.parse(text) as any }
      }

      // Phase 1: the API only (no workers), so every event it records is still undelivered when it dies.
      children.push(serveProcess(database, port, ["--no-workers", "--allow-insecure-webhooks"]))
      yield* Effect.promise(() => waitUntilUp(baseUrl))
      const hook = yield* Effect.promise(() => call("POST", "/api/v1/webhooks", { url: receiver.url, events: ["key.created", "key.revoked", "proof.completed"] }))
      expect(hook.status).toBe(201)

      const acceptedProofs: Array<string> = []
      const createdKeys: Array<string> = []
      const revokedKeys: Array<string> = []
      let stop = false
      const proofClient = async () => {
        for (let i = 0; !stop; i++) {
          try {
            const r = await call("POST", "/api/v1/proofs", { type: "multiplier", inputs: { a: 2 + (i % 50), b: 3 } })
            if (r.status === 202) acceptedProofs.push(r.json.proof_id)
          } catch { /* the server died mid-request: not acknowledged */ }
        }
      }
      const keyClient = async () => {
        while (!stop) {
          try {
            const created = await call("POST", "/api/v1/keys", { name: "churn" })
            if (created.status !== 201) continue
            createdKeys.push(created.json.id)
            const revoked = await call("DELETE", `/api/v1/keys/${created.json.id}`)
            if (revoked.status === 204) revokedKeys.push(created.json.id)
          } catch { /* not acknowledged */ }
        }
      }
      const load = Promise.all([proofClient(), proofClient(), proofClient(), keyClient(), keyClient()])
      yield* Effect.sleep("1500 millis")
      children[0]!.kill("SIGKILL")
      stop = true
      yield* Effect.promise(() => load)
      expect(acceptedProofs.length).toBeGreaterThan(10)
      expect(createdKeys.length).toBeGreaterThan(3)

      // Phase 2: restart on the same file with the workers (`--workers`, the default, said aloud).
      children.push(serveProcess(database, port, ["--workers", "--allow-insecure-webhooks"]))
      yield* Effect.promise(() => waitUntilUp(baseUrl))
      for (const id of acceptedProofs) expect((yield* Effect.promise(() => call("GET", `/api/v1/proofs/${id}`))).status, id).toBe(200)

      const db = new Database(file, { readonly: true })
      const events = db.prepare("select id, type, data from events order by id").all() as Array<{ id: string; type: string; data: string }>
      // The events recorded for the webhook (the account's first key predates it).
      const owed = db.prepare("select distinct event_id from deliveries").all() as Array<{ event_id: string }>
      db.close()
      const eventKeys = (type: string) => events.filter((e) => e.type === type).map((e) => (JSON.parse(e.data) as { id: string }).id)
      expect(eventKeys("key.created")).toEqual(expect.arrayContaining(createdKeys))
      expect(eventKeys("key.revoked")).toEqual(expect.arrayContaining(revokedKeys))

      // Every event recorded before the crash is delivered after it, each at least once.
      const recorded = new Set(owed.map((d) => d.event_id))
      const delivered = () =>
        Effect.map(receiver.received, (all) => new Set(all.map((r) => (JSON.parse(r.rawBody.toString("utf8")) as { id: string }).id)))
      yield* Effect.gen(function*() {
        for (;;) {
          const got = yield* delivered()
          if ([...recorded].every((id) => got.has(id))) return
          yield* Effect.sleep("200 millis")
        }
      }).pipe(
        Effect.timeout("60 seconds"),
        Effect.tapError(() => Effect.gen(function*() {
          const got = yield* delivered()
          const db2 = new Database(file, { readonly: true })
          const statuses = db2.prepare("select status, attempts, count(*) as n from deliveries group by status, attempts").all()
          const attempts = db2.prepare("select outcome, status_code, error, count(*) as n from delivery_attempts group by 1,2,3").all()
          db2.close()
          console.error("recorded", recorded.size, "delivered", got.size, JSON.stringify(statuses), JSON.stringify(attempts))
        }))
      )
      expect(recorded.size).toBeGreaterThanOrEqual(createdKeys.length + revokedKeys.length)
    }), 120_000)
})
