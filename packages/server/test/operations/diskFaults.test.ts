import { expect, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import { appendFileSync, existsSync, mkdtempSync, renameSync, rmSync, unlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe } from "vitest"
import { createAccount, type ServeProcess, serveProcess, tempSqlite } from "../processes.js"

/**
 * Whether `chattr +i` makes a file here unwritable (root on a filesystem with the immutable flag,
 * as ext4): the way these tests make SQLite's files read-only under a running server, which
 * `chmod` cannot do to root.
 */
const immutableProblem = (() => {
  const dir = mkdtempSync(join(tmpdir(), "mzk-chattr-"))
  const file = join(dir, "probe")
  writeFileSync(file, "x")
  try {
    execFileSync("chattr", ["+i", file], { stdio: "pipe" })
  } catch (error) {
    rmSync(dir, { recursive: true, force: true })
    return `chattr +i failed (${error instanceof Error ? error.message.split("\n")[0] : String(error)})`
  }
  try {
    appendFileSync(file, "y")
    return "chattr +i did not stop a write"
  } catch {
    return undefined
  } finally {
    execFileSync("chattr", ["-i", file])
    rmSync(dir, { recursive: true, force: true })
  }
})()
if (immutableProblem !== undefined) console.warn(`Skipping the read-only disk tests: ${immutableProblem}; they need root and a filesystem with chattr +i (ext4)`)
const describeImmutable = immutableProblem === undefined ? describe : describe.skip

/** `chattr +i` on `files` now, and `chattr -i` when the scope closes (before the folder is removed). */
const makeImmutable = (files: ReadonlyArray<string>) =>
  Effect.acquireRelease(
    Effect.sync(() => execFileSync("chattr", ["+i", ...files])),
    () => Effect.sync(() => execFileSync("chattr", ["-i", ...files]))
  )

interface LogLine {
  readonly message: string
  readonly logLevel: string
  readonly annotations: Record<string, unknown>
}

/** The server's JSON log lines so far. */
const logLines = (server: ServeProcess): Array<LogLine> =>
  server.output().trim().split("\n").flatMap((line) => {
    try {
      return [JSON.parse(line) as LogLine]
    } catch {
      return []
    }
  })

/** The storage failure lines logged for request `requestId`. */
const failuresOf = (server: ServeProcess, requestId: string | null) =>
  logLines(server).filter((line) => line.annotations.event === "storage.failure" && line.annotations.request_id === requestId)

/** The server on a fresh SQLite file, its account's key, and a second key made before any fault and never used since. */
const serverOnFile = (prefix: string) =>
  Effect.gen(function*() {
    const { database, file } = yield* tempSqlite(prefix)
    const { api_key: key } = createAccount(database, "Disk")
    const server = yield* serveProcess(database, { args: ["--no-workers"] })
    const client = server.client(key)
    const call = (method: string, path: string, options: { body?: unknown; headers?: Record<string, string>; token?: string } = {}) =>
      Effect.promise(() => client.send(method, path, options))
    const unused = yield* call("POST", "/api/v1/keys", { body: { name: "unused-until-the-fault" } })
    expect(unused.status).toBe(201)
    return { database, file, server, call, unusedKey: unused.json.key as string, unusedKeyId: unused.json.id as string }
  })

const NOT_WRITABLE = "the database file cannot be written (EPERM: the file is immutable, or the system refuses writes to it)"

/** A 503 `service_unavailable` in the envelope, saying nothing of the cause. */
const expectUnavailable = (reply: { status: number; text: string; json: any; headers: Headers }, file: string) => {
  expect(reply.status, reply.text).toBe(503)
  expect(reply.json.error).toEqual({
    code: "service_unavailable",
    message: "Storage is temporarily unavailable; retry later",
    request_id: reply.headers.get("request-id")
  })
  expect(reply.text).not.toContain(file)
}

describeImmutable("a read-only disk under a running mzk serve (SQLite, chattr +i)", () => {
  it.scopedLive("reads answer, writes are 503, /readyz names the cause, each failure is logged with SQLite's text, and all recovers without a restart", () =>
    Effect.gen(function*() {
      const { call, file, server, unusedKey, unusedKeyId } = yield* serverOnFile("read-only")

      // The database file made read-only, as the issue did: only mzk.db.
      const fault = yield* Effect.scoped(Effect.gen(function*() {
        yield* makeImmutable([file])
        // A read by a key whose first use is due to be written (`last_used_at`): answered all the same.
        const read = yield* call("GET", "/api/v1/keys", { token: unusedKey })
        expect(read.status, read.text).toBe(200)
        expect(read.json.keys.find((k: { name: string }) => k.name === "unused-until-the-fault").last_used_at).toBeNull()
        expect((yield* call("GET", "/api/v1/webhooks")).status).toBe(200)

        const write = yield* call("POST", "/api/v1/keys", { body: { name: "during-the-fault" }, headers: { "idempotency-key": "during" } })
        expectUnavailable(write, file)
        const ready = yield* call("GET", "/readyz")
        expect(ready.status).toBe(503)
        expect(ready.json.status).toBe("not_ready")
        expect(ready.json.checks.database).toEqual({ ok: false, message: `writes fail: ${NOT_WRITABLE}` })
        expect(ready.text).not.toContain(file)
        return { write }
      }))

      // One error line per failure, with the reason and the error as the system or database gave it.
      const [failure, ...more] = failuresOf(server, fault.write.headers.get("request-id"))
      expect(more).toEqual([])
      expect(failure).toMatchObject({
        message: "request failed: storage unavailable",
        logLevel: "ERROR",
        annotations: { reason: NOT_WRITABLE, database_code: "EPERM", route: "/api/v1/keys" }
      })
      expect(failure!.annotations.database_error).toMatch(/^EPERM: operation not permitted/)
      // The skipped `last_used_at` write of the read is logged too, naming the key; the read still answered.
      expect(logLines(server).filter((line) => line.annotations.event === "storage.failure" && line.annotations.key_id === unusedKeyId))
        .toMatchObject([{ logLevel: "ERROR", annotations: { reason: NOT_WRITABLE } }])

      // chattr -i: writes and readiness are back, without a restart; the refused idempotent request runs anew.
      expect((yield* call("GET", "/readyz")).status).toBe(200)
      const retried = yield* call("POST", "/api/v1/keys", { body: { name: "during-the-fault" }, headers: { "idempotency-key": "during" } })
      expect([retried.status, retried.headers.get("idempotent-replayed")]).toEqual([201, null])

      // Now SQLite's own write-ahead log made read-only: SQLite's error, in its words.
      const walFault = yield* Effect.scoped(Effect.gen(function*() {
        yield* makeImmutable([`${file}-wal`])
        const write = yield* call("POST", "/api/v1/keys", { body: { name: "wal-read-only" } })
        expectUnavailable(write, file)
        expect((yield* call("GET", "/api/v1/keys")).status).toBe(200)
        const ready = yield* call("GET", "/readyz")
        expect([ready.status, ready.json.checks.database.ok]).toEqual([503, false])
        expect(ready.json.checks.database.message).toMatch(/^writes fail: /)
        return write
      }))
      const [walFailure] = failuresOf(server, walFault.headers.get("request-id"))
      expect(walFailure!.annotations).toMatchObject({ database_code: expect.stringMatching(/^SQLITE_(IOERR|READONLY)/) })
      expect(walFailure!.annotations.database_error).toEqual(expect.any(String))
      expect((yield* call("POST", "/api/v1/keys", { body: { name: "after-the-wal-fault" } })).status).toBe(201)
      expect((yield* call("GET", "/readyz")).status).toBe(200)

      // Nothing of it reached a client: no path, no SQLite text in any answer above (checked per answer);
      // and the log never holds a key.
      expect(server.output()).not.toContain(unusedKey)
    }), 120_000)
})

describe("the database file deleted or replaced under a running mzk serve (SQLite)", () => {
  it.scopedLive("/readyz says so, writes are refused instead of going to the unlinked file, reads answer; a restart opens the new file", () =>
    Effect.gen(function*() {
      const { call, database, file, server, unusedKey } = yield* serverOnFile("replaced")
      const backup = `${file}.backup`
      // A consistent copy of the live database, as docs/deployment.md takes one.
      const source = new Database(file, { readonly: true })
      source.exec(`VACUUM INTO '${backup}'`)
      source.close()

      unlinkSync(file)
      const read = yield* call("GET", "/api/v1/keys", { token: unusedKey })
      expect(read.status, read.text).toBe(200)
      const write = yield* call("POST", "/api/v1/keys", { body: { name: "into-the-void" } })
      expectUnavailable(write, file)
      expect(existsSync(file)).toBe(false)
      const gone = yield* call("GET", "/readyz")
      expect(gone.status).toBe(503)
      const replaced = { ok: false, message: "writes fail: the database file was replaced or deleted since mzk opened it; restart mzk to open the file now at its path" }
      expect(gone.json.checks.database).toEqual(replaced)
      expect(failuresOf(server, write.headers.get("request-id"))).toMatchObject([{ logLevel: "ERROR", annotations: { reason: replaced.message.slice("writes fail: ".length) } }])

      // A backup restored in its place is another file: still refused until a restart opens it.
      renameSync(backup, file)
      expectUnavailable(yield* call("POST", "/api/v1/keys", { body: { name: "into-the-old-file" } }), file)
      expect((yield* call("GET", "/readyz")).json.checks.database).toEqual(replaced)

      server.child.kill("SIGTERM")
      yield* Effect.promise(() => server.exited)
      // The restore as docs/deployment.md has it: the old file's write-ahead log, which SQLite leaves
      // at the path when its file has moved, goes too.
      rmSync(`${file}-wal`, { force: true })
      rmSync(`${file}-shm`, { force: true })
      const restarted = (yield* serveProcess(database, { args: ["--no-workers"] })).client(unusedKey)
      expect((yield* Effect.promise(() => restarted.send("GET", "/readyz"))).status).toBe(200)
      const names = (yield* Effect.promise(() => restarted.send("GET", "/api/v1/keys"))).json.keys.map((k: { name: string }) => k.name)
      // The restored backup: what was written before it was taken, nothing that was refused.
      expect(names.sort()).toEqual(["default", "unused-until-the-fault"])
      expect((yield* Effect.promise(() => restarted.send("POST", "/api/v1/keys", { body: { name: "after-restart" } }))).status).toBe(201)
    }), 120_000)
})
