import { eventually } from "@mzk/testkit"
import { expect, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { Effect, Fiber } from "effect"
import { execFileSync, spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { connect } from "node:net"
import { join } from "node:path"
import { describe } from "vitest"
import { freePort, mzkProcess, root, serveProcess, tempSqlite } from "../processes.js"

/**
 * The README's walk-through, run as a reader runs it: the block after the marker, taken from
 * README.md as it is, by bash, against `mzk serve --allow-insecure-webhooks` in another process.
 * The block reads `MZK_PORT` and `HOOK_PORT` (so parallel runs do not collide on 8080 and 9000)
 * and, through `./mzk`, `MZK_DATABASE_URL`.
 *
 * On a fast machine the multiplier proof completes in milliseconds, before a reader could type the
 * next command, so a walk-through that forgot to wait would pass here and fail elsewhere (409:
 * the proof is still `running`). So the server runs without workers, and the worker that proves
 * starts only after the proof has sat queued for a second: the block must wait for it.
 */
const MARKER = "<!-- readme-test: walk-through"

/** The walk-through's tools, named up front rather than as a "command not found" in its output. */
const missingTools = ["bash", "curl", "jq"].filter((tool) => {
  try {
    execFileSync("sh", ["-c", `command -v ${tool}`], { stdio: "ignore" })
    return false
  } catch {
    return true
  }
})

const walkThrough = () => {
  const readme = readFileSync(join(root, "README.md"), "utf8")
  const at = readme.indexOf(MARKER)
  if (at === -1) throw new Error(`README.md has no "${MARKER}" marker`)
  const block = /```sh\n([\s\S]*?)\n```/.exec(readme.slice(at))
  if (block === null) throw new Error("README.md has no ```sh block after the walk-through marker")
  return block[1]!
}

interface Ran {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** `bash -c script` in its own process group, all of which (the block's receiver too) is killed after `timeoutMs` or at the end. */
const runBash = (script: string, env: Record<string, string>, timeoutMs: number) =>
  Effect.acquireRelease(
    Effect.sync(() => spawn("bash", ["-c", script], { cwd: root, env: { ...process.env, ...env }, detached: true })),
    (child) => Effect.sync(() => {
      try {
        process.kill(-child.pid!, "SIGKILL")
      } catch { /* the group has ended */ }
    })
  ).pipe(Effect.flatMap((child) =>
    Effect.promise(() =>
      new Promise<Ran>((resolve) => {
        let stdout = ""
        let stderr = ""
        child.stdout!.on("data", (chunk) => (stdout += chunk))
        child.stderr!.on("data", (chunk) => (stderr += chunk))
        const timer = setTimeout(() => process.kill(-child.pid!, "SIGKILL"), timeoutMs)
        child.once("close", (code) => {
          clearTimeout(timer)
          resolve({ code, stdout, stderr })
        })
      })
    )
  ))

/** How many proofs the database holds (read beside the server: SQLite in WAL mode). */
const proofsIn = (file: string) => {
  const db = new Database(file, { readonly: true, fileMustExist: true })
  try {
    return (db.prepare("SELECT count(*) AS n FROM proofs").get() as { n: number }).n
  } catch {
    return 0 // not migrated yet
  } finally {
    db.close()
  }
}

/** Whether something listens on the loopback port. */
const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, "127.0.0.1")
    socket.once("connect", () => {
      socket.destroy()
      resolve(true)
    }).once("error", () => resolve(false))
  })

describe("the README walk-through", () => {
  it.scopedLive("runs as pasted: the proof completes, verifies, and the received signature checks out with the kept secret", () =>
    Effect.gen(function*() {
      expect(missingTools, "the README walk-through needs these (apt-get install curl jq)").toEqual([])
      const { database, file } = yield* tempSqlite("readme")
      const server = yield* serveProcess(database, { args: ["--allow-insecure-webhooks", "--no-workers"] })
      const env = { MZK_PORT: new URL(server.baseUrl).port, HOOK_PORT: String(yield* Effect.promise(freePort)), MZK_DATABASE_URL: database }
      const block = walkThrough()

      const running = yield* Effect.fork(runBash(block, env, 120_000))
      yield* Effect.promise(() => eventually(async () => proofsIn(file) > 0 || undefined, 60_000, 100))
      yield* Effect.sleep("1 second")
      yield* mzkProcess(["worker", "--database", database, "--allow-insecure-webhooks"])
      const ran = yield* Fiber.join(running)
      // `mzk accounts create --json` says on stderr which database it wrote to (stdout stays the JSON); nothing else is said there.
      expect(ran.stderr, ran.stdout).toBe(`Wrote to ${database}\n`)
      expect(ran.code, ran.stderr).toBe(0)
      expect(ran.stdout).toMatch(/"status": "completed"/)
      expect(ran.stdout).toMatch(/"public_inputs": \{\s*"c": "33"\s*\}/)
      expect(ran.stdout).toMatch(/"valid":true/)
      expect(ran.stdout).toMatch(/^signature valid, signed at \S+: proof\.completed$/m)
      expect(ran.stdout).toContain(`{"event_type":"proof.completed","attempt":1,"status_code":200}`)
      expect(ran.stdout).toMatch(/^\{"type":"proof\.completed","proof":"proof_[0-9a-z]{26}","order":"ord_1042"\}$/m)
      expect(ran.stdout).toMatch(/"metadata": \{\s*"order": "ord_1042"\s*\}/)
      expect(ran.stdout).toMatch(/^\{"proof_id":"proof_[0-9a-z]{26}","metadata":\{"order":"ord_1042"\}\}$/m)
      expect(ran.stdout).toContain(`{"action":"webhook.created","actor":"api_key","ip_address":"127.0.0.1"}`)
      expect(ran.stdout).toContain(`{"action":"key.created","actor":"cli","ip_address":null}`)
      expect(ran.stdout).toContain(`{"day":{"limit":5000,"used":1,"remaining":4999},"completed_today":1}`)
      // The block stops the receiver it started.
      expect(yield* Effect.promise(() => listening(Number(env.HOOK_PORT)))).toBe(false)

      // The block's signature check is a check: with another secret, the same delivery fails it.
      const wrongSecret = block.replace(/"\$SECRET"$/m, "\"whsec_not_the_secret\"")
      expect(wrongSecret).not.toBe(block)
      const refused = yield* runBash(wrongSecret, env, 120_000)
      expect(refused.stdout, refused.stderr).toMatch(/^signature INVALID proof\.completed$/m)
    }), 300_000)
})
