import { hashApiKey } from "@mzk/core"
import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFileSync, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe } from "vitest"

const root = fileURLToPath(new URL("../../..", import.meta.url))

describe("server logs", () => {
  it.live("are JSON lines and never contain a key, a webhook secret, a key hash or an Authorization header", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "mzk-logs-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
      const database = `sqlite:${join(dir, "mzk.db")}`
      const { api_key: key } = JSON.parse(execFileSync(process.execPath,
        ["--import", "tsx", "packages/server/src/cli.ts", "accounts", "create", "--name", "Logs", "--database", database, "--json"],
        { cwd: root, encoding: "utf8" })) as { api_key: string }
      const port = 18300 + Math.floor(Math.random() * 500)
      const child = spawn(process.execPath, ["--import", "tsx", "packages/server/src/cli.ts", "serve", "--no-workers", "--port", String(port), "--database", database], { cwd: root })
      let output = ""
      child.stdout.on("data", (chunk) => (output += chunk))
      child.stderr.on("data", (chunk) => (output += chunk))
      yield* Effect.addFinalizer(() => Effect.sync(() => child.kill("SIGKILL")))
      const base = `http://127.0.0.1:${port}/api/v1`
      const call = (method: string, path: string, token: string, body?: string) =>
        Effect.promise(async () => {
          for (let i = 0; ; i++) {
            try {
              const r = await fetch(`${base}${path}`, { method, headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, ...(body === undefined ? {} : { body }) })
              return { status: r.status, text: await r.text() }
            } catch (error) {
              if (i > 200) throw error
              await new Promise((resolve) => setTimeout(resolve, 50))
            }
          }
        })
      const created = JSON.parse((yield* call("POST", "/keys", key, JSON.stringify({ name: "second" }))).text) as { key: string }
      const hook = JSON.parse((yield* call("POST", "/webhooks", key, JSON.stringify({ url: "https://hooks.example.com/x", events: ["key.created"] }))).text) as { secret: string }
      yield* call("GET", "/keys", created.key)
      yield* call("GET", "/keys", key.slice(0, -1) + "x")
      yield* call("POST", "/keys", key, "{not json")
      yield* call("POST", "/proofs", key, JSON.stringify({ type: "multiplier", inputs: { a: key } }))
      child.kill("SIGTERM")
      yield* Effect.promise(() => new Promise((resolve) => child.once("exit", resolve)))

      expect(output).toContain("Listening on")
      for (const line of output.trim().split("\n")) expect(() => JSON.parse(line), line).not.toThrow()
      for (const secret of [key, created.key, hook.secret, hashApiKey(key), hashApiKey(created.key)]) {
        expect(output).not.toContain(secret)
      }
      expect(output.toLowerCase()).not.toContain("authorization")
      expect(output).not.toContain("Bearer")
    }).pipe(Effect.scoped), 60_000)
})
