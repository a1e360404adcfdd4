import { hashApiKey } from "@mzk/core"
import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { describe } from "vitest"
import { createAccount, serveProcess, tempSqlite } from "../processes.js"

describe("server logs", () => {
  it.live("are JSON lines and never contain a key, a webhook secret, a key hash or an Authorization header", () =>
    Effect.gen(function*() {
      const { database } = yield* tempSqlite("logs")
      const { api_key: key } = createAccount(database, "Logs")
      const server = yield* serveProcess(database, { args: ["--no-workers"] })
      const client = server.client()
      const call = (method: string, path: string, token: string, body?: string) =>
        Effect.promise(() => client.send(method, `/api/v1${path}`, { token, headers: { "content-type": "application/json" }, body }))
      const created = JSON.parse((yield* call("POST", "/keys", key, JSON.stringify({ name: "second" }))).text) as { key: string }
      const hook = JSON.parse((yield* call("POST", "/webhooks", key, JSON.stringify({ url: "https://hooks.example.com/x", events: ["key.created"] }))).text) as { secret: string }
      yield* call("GET", "/keys", created.key)
      yield* call("GET", "/keys", key.slice(0, -1) + "x")
      yield* call("POST", "/keys", key, "{not json")
      yield* call("POST", "/proofs", key, JSON.stringify({ type: "multiplier", inputs: { a: key } }))
      server.child.kill("SIGTERM")
      yield* Effect.promise(() => server.exited)
      const output = server.output()

      expect(output).toContain("Listening on")
      for (const line of output.trim().split("\n")) expect(() => JSON.parse(line), line).not.toThrow()
      for (const secret of [key, created.key, hook.secret, hashApiKey(key), hashApiKey(created.key)]) {
        expect(output).not.toContain(secret)
      }
      expect(output.toLowerCase()).not.toContain("authorization")
      expect(output).not.toContain("Bearer")
    }).pipe(Effect.scoped), 60_000)
})
