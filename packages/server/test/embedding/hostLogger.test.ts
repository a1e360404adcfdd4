import { spawnSync } from "node:child_process"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { fileURLToPath } from "node:url"
import { hashApiKey } from "@mzk/core"
import { afterEach, describe, expect, it } from "vitest"
import { createMzk, type Mzk } from "../../src/createMzk.js"
import { type HostLogger, hostLogStyle } from "../../src/logging.js"
import { root } from "../processes.js"

type Call = { readonly level: string; readonly args: ReadonlyArray<unknown> }

/** A logger of the host's shape that keeps what it is handed; `child` makes it pino-shaped. */
const recording = (shape: "pino" | "console") => {
  const calls: Array<Call> = []
  const method = (level: string) => (...args: Array<unknown>) => void calls.push({ level, args })
  const base = { info: method("info"), warn: method("warn"), error: method("error"), debug: method("debug") }
  const logger: HostLogger = shape === "pino" ? { ...base, fatal: method("fatal"), child: () => logger } : base
  return { logger, calls }
}

let running: Array<{ readonly mzk: Mzk; readonly server: Server }> = []
afterEach(async () => {
  for (const { mzk, server } of running) {
    await new Promise((resolve) => server.close(resolve))
    await mzk.stop()
  }
  running = []
})

/** createMzk with `logger` behind a real port; a few requests with a good key, a wrong one and bad JSON. */
const exercise = async (logger: HostLogger) => {
  const mzk = await createMzk({ database: "sqlite::memory:", logger, accessLog: true })
  const server = createServer(mzk.handler)
  running.push({ mzk, server })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  await mzk.start()
  const { api_key } = await mzk.createAccount({ name: "Host logs" })
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`
  const call = (method: string, path: string, token: string, body?: string) =>
    fetch(`${base}${path}`, { method, headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, ...(body === undefined ? {} : { body }) })
  const created = await (await call("POST", "/keys", api_key, JSON.stringify({ name: "second" }))).json() as { key: string }
  const hook = await (await call("POST", "/webhooks", api_key, JSON.stringify({ url: "https://hooks.example.com/x", events: ["key.created"] }))).json() as { secret: string }
  expect((await call("GET", "/keys", created.key)).status).toBe(200)
  expect((await call("GET", "/keys", `${api_key.slice(0, -1)}${api_key.endsWith("x") ? "y" : "x"}`)).status).toBe(401)
  expect((await call("POST", "/keys", api_key, "{not json")).status).toBe(400)
  return [api_key, created.key, hook.secret, hashApiKey(api_key), hashApiKey(created.key)]
}

const expectNoSecrets = (calls: ReadonlyArray<Call>, secrets: ReadonlyArray<string>) => {
  const text = JSON.stringify(calls)
  for (const secret of secrets) expect(text).not.toContain(secret)
  expect(text).not.toContain("Bearer")
}

describe("createMzk({ logger })", () => {
  it("hands a pino-shaped logger (fields, message): the access log line with its fields, and no secrets", async () => {
    const { calls, logger } = recording("pino")
    const secrets = await exercise(logger)
    const requests = calls.filter((call) => call.args[1] === "request")
    expect(requests.length).toBeGreaterThanOrEqual(5)
    for (const call of calls) {
      expect(call.args).toHaveLength(2)
      expect(typeof call.args[0]).toBe("object")
      expect(typeof call.args[1]).toBe("string")
    }
    expect(requests.map((call) => call.args[0])).toContainEqual(expect.objectContaining({ method: "GET", status: 401 }))
    expect(requests.map((call) => call.args[0])).toContainEqual(expect.objectContaining({ method: "POST", status: 400 }))
    // The startup line of the circuit loops, at its level.
    expect(calls).toContainEqual({ level: "info", args: [{}, expect.stringContaining("circuits: no powers of tau")] })
    expectNoSecrets(calls, secrets)
  }, 60_000)

  it("hands a console-shaped logger (message, fields), the fields left out when there are none", async () => {
    const { calls, logger } = recording("console")
    const secrets = await exercise(logger)
    for (const call of calls) expect(typeof call.args[0]).toBe("string")
    const requests = calls.filter((call) => call.args[0] === "request")
    expect(requests.map((call) => call.args[1])).toContainEqual(expect.objectContaining({ method: "GET", status: 401 }))
    expect(calls).toContainEqual({ level: "info", args: [expect.stringContaining("circuits: no powers of tau")] })
    expectNoSecrets(calls, secrets)
  }, 60_000)

  it("calls console itself (message, fields) and a pino-shaped logger (fields, message)", () => {
    expect(hostLogStyle(console)).toBe("message-first")
    expect(hostLogStyle(recording("pino").logger)).toBe("fields-first")
  })
})

describe("mzk's logs without a host logger", () => {
  it("are JSON lines on stdout when embedded, as they are from `mzk serve` (logs.test.ts), with no secrets", () => {
    const fixture = fileURLToPath(new URL("../fixtures/logging/defaultLogs.ts", import.meta.url))
    const run = spawnSync(process.execPath, ["--import", "tsx", fixture], { cwd: root, encoding: "utf8", timeout: 50_000 })
    expect(run.status, run.stderr).toBe(0)
    const key = run.stderr.trim().split("\n").at(-1)!
    expect(key).toMatch(/^mzk_/)
    const stdout = run.stdout
    const lines = stdout.trim().split("\n")
    expect(lines.length).toBeGreaterThanOrEqual(3)
    const parsed = lines.map((line) => JSON.parse(line) as { message: unknown; logLevel: string; annotations: Record<string, unknown> })
    expect(parsed).toContainEqual(expect.objectContaining({ message: "request", logLevel: "INFO", annotations: expect.objectContaining({ status: 401 }) }))
    for (const secret of [key, hashApiKey(key)]) expect(stdout).not.toContain(secret)
    expect(stdout).not.toContain("Bearer")
  }, 60_000)
})
