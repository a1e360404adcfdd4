import { startWebhookReceiver } from "@mzk/testkit"
import { expect, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { Effect } from "effect"
import { describe } from "vitest"
import { createAccount, serveProcess, tempSqlite } from "../processes.js"

describe("SQLite durability", () => {
  it.scopedLive("a server killed with SIGKILL while accepting proofs and recording events loses nothing it acknowledged", () =>
    Effect.gen(function*() {
      const { database, file } = yield* tempSqlite("durability")
      const { api_key: key } = createAccount(database, "Durable")
      const receiver = yield* startWebhookReceiver()

      // Phase 1: the API only (no workers), so every event it records is still undelivered when it dies.
      const first = yield* serveProcess(database, { args: ["--no-workers", "--allow-insecure-webhooks"] })
      const client = first.client(key)
      const call = (method: string, path: string, body?: unknown) => client.send(method, path, { body })
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
      first.child.kill("SIGKILL")
      stop = true
      yield* Effect.promise(() => load)
      expect(acceptedProofs.length).toBeGreaterThan(10)
      expect(createdKeys.length).toBeGreaterThan(3)

      // Phase 2: restart on the same file with the workers (`--workers`, the default, said aloud).
      const second = (yield* serveProcess(database, { args: ["--workers", "--allow-insecure-webhooks"] })).client(key)
      for (const id of acceptedProofs) expect((yield* Effect.promise(() => second.send("GET", `/api/v1/proofs/${id}`))).status, id).toBe(200)

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
