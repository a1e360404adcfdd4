import { describePostgres, freshDatabaseUrl } from "@mzk/adapters-postgres/testing"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, relative } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { freePort, root } from "../processes.js"

/**
 * The CLI as the README runs it, `./mzk …` (or `pnpm mzk …`, the same after pnpm's start): the
 * bundle made at install (scripts/mzk.mjs, remade first when a source changed, so these runs are of
 * the code under test). Each command is a real process; no timing is asserted here
 * (packages/server/bench/cli.ts prints those).
 */

const dir = mkdtempSync(join(tmpdir(), "mzk-pnpm-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

interface Ran {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

/** `command args` from the repository root, in a process group of its own (so a signal reaches it as Ctrl-C would). */
const start = (command: string, args: ReadonlyArray<string>, onOutput: (output: string, pid: number) => void = () => {}) => {
  const child = spawn(command, args, { cwd: root, detached: true, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NODE_OPTIONS: "" } })
  let stdout = ""
  let stderr = ""
  child.stdout.on("data", (chunk) => {
    stdout += chunk
    onOutput(stdout + stderr, child.pid!)
  })
  child.stderr.on("data", (chunk) => {
    stderr += chunk
    onOutput(stdout + stderr, child.pid!)
  })
  // A guard against a hang, not a speed goal.
  const timer = setTimeout(() => child.kill("SIGKILL"), 240_000)
  return new Promise<Ran>((resolve) =>
    child.once("close", (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, stdout, stderr })
    })
  )
}
const mzk = (...args: ReadonlyArray<string>) => start("./mzk", args)

describe("pnpm mzk: which database a command wrote to", () => {
  it("each write says its database (a SQLite file by its full path); --database-url is --database; reads say nothing", async () => {
    const file = join(dir, "named-by-url.db")
    const created = await mzk("accounts", "create", "--name", "Acme", "--database-url", `sqlite:${file}`)
    expect(created.code, created.stderr).toBe(0)
    expect(existsSync(file)).toBe(true)
    expect(created.stdout.trim().split("\n").at(-1)).toBe(`Wrote to sqlite:${file}`)
    const accountId = /Account (acct_\w+)/.exec(created.stdout)![1]!

    // With --json, stdout stays one JSON document; the line goes to stderr.
    const json = await mzk("accounts", "create", "--name", "Beta", "--database", `sqlite:${file}`, "--json")
    expect(json.code, json.stderr).toBe(0)
    expect(Object.keys(JSON.parse(json.stdout) as object)).toEqual(["account_id", "api_key"])
    expect(json.stderr).toBe(`Wrote to sqlite:${file}\n`)

    const key = await mzk("keys", "create", "--account", accountId, "--name", "ci", "--database-url", `sqlite:${file}`, "--json")
    expect(key.code, key.stderr).toBe(0)
    expect(key.stderr).toBe(`Wrote to sqlite:${file}\n`)
    const keyId = (JSON.parse(key.stdout) as { id: string }).id
    const [listed, revoked] = [
      await mzk("keys", "list", "--account", accountId, "--database-url", `sqlite:${file}`),
      await mzk("keys", "revoke", keyId, "--account", accountId, "--database-url", `sqlite:${file}`)
    ]
    expect(listed.code, listed.stderr).toBe(0)
    expect(listed.stdout).toContain(keyId)
    expect(listed.stdout + listed.stderr).not.toContain("Wrote to")
    expect(revoked.code, revoked.stderr).toBe(0)
    expect(revoked.stdout).toBe(`Revoked key ${keyId}\nWrote to sqlite:${file}\n`)

    // A relative path is said in full: which folder it was relative to is what a person cannot see.
    const fromRoot = await mzk("accounts", "create", "--name", "Gamma", "--database", `sqlite:${relative(root, join(dir, "relative.db"))}`)
    expect(fromRoot.code, fromRoot.stderr).toBe(0)
    expect(fromRoot.stdout).toContain(`Wrote to sqlite:${join(dir, "relative.db")}`)
  }, 600_000)

  describePostgres("on PostgreSQL", () => {
    it("says the URL without its password", async () => {
      await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
        const { url } = yield* freshDatabaseUrl
        // The test server trusts loopback: the password is not checked, only kept out of the output.
        const withPassword = new URL(url)
        withPassword.password = "s3cret-Pw"
        const created = yield* Effect.promise(() => mzk("accounts", "create", "--name", "Acme", "--database-url", withPassword.toString()))
        expect(created.code, created.stderr).toBe(0)
        withPassword.password = "***"
        expect(created.stdout).toContain(`Wrote to ${withPassword.toString()}`)
        expect(created.stdout + created.stderr).not.toContain("s3cret")
      })))
    }, 300_000)
  })
})

describe("pnpm mzk: usage", () => {
  it("an unknown flag is a usage mistake that names the flag it was likely meant to be", async () => {
    const [serve, create, list] = [
      await mzk("serve", "--prot", "8080"),
      await mzk("accounts", "create", "--nmae", "Acme"),
      await mzk("keys", "list", "--account", "acct_01m8dsm72a8vb5ydj83wj4wxrt", "--databse", "sqlite::memory:")
    ]
    expect([serve.code, serve.stderr]).toEqual([2, "mzk: unknown flag --prot: did you mean --port? (mzk serve --help shows the usage)\n"])
    expect(create.code).toBe(2)
    // @effect/cli's suggestion, said as mzk says its own.
    expect(create.stderr).toBe("mzk: unknown flag --nmae: did you mean --name? (mzk accounts create --help shows the usage)\n")
    expect(list.code).toBe(2)
    expect(list.stderr).toMatch(/^mzk: .*--databse.*did you mean --database\?/)
  }, 300_000)

  it("a mistyped command is named with the commands of its own level and the one it was likely meant to be", async () => {
    const [sub, top, none] = [await mzk("circuits", "ad", "foo"), await mzk("serv"), await mzk("keys", "zzzzzz")]
    expect([sub.code, sub.stderr]).toEqual([
      2,
      'mzk: unknown command circuits ad: did you mean circuits add? (mzk circuits takes add, list, remove, download; mzk circuits --help shows the usage)\n'
    ])
    expect([top.code, top.stderr]).toEqual([
      2,
      'mzk: unknown command serv: did you mean serve? (mzk takes serve, worker, migrate, accounts, keys, circuits, verify; mzk --help shows the usage)\n'
    ])
    expect([none.code, none.stderr]).toEqual([2, 'mzk: unknown command keys zzzzzz (mzk keys takes create, list, revoke; mzk keys --help shows the usage)\n'])
  }, 300_000)

  it("a PostgreSQL URL with sslmode=require against a server without TLS: mzk's one line, not pg's notice", async () => {
    const ran = await mzk("keys", "list", "--account", "acct_01m8dsm72a8vb5ydj83wj4wxrt", "--database-url", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=require")
    expect([ran.code, ran.stdout, ran.stderr]).toEqual([
      1,
      "",
      "mzk: cannot connect to the PostgreSQL database (the server does not take TLS connections: remove sslmode from the URL, or turn ssl on in the server) (--database, MZK_DATABASE_URL)\n"
    ])
  }, 300_000)

  it("--help shows optional flags in brackets, repeatable ones included, and required ones bare", async () => {
    const [keys, circuits] = [await mzk("keys", "create", "--help"), await mzk("circuits", "add", "--help")]
    // The usage line as one line again: help is wrapped to 80 columns.
    const usage = (ran: Ran) => /^\$ .*(?:\n[ \t]+\S.*)*/m.exec(ran.stdout)![0].replace(/\s+/g, " ")
    expect(usage(keys)).toMatch(/^\$ create --account text --name text \[--description text\] \[--scope scope\.\.\.\] /)
    expect(usage(keys)).toContain("[(--database, --database-url url)]")
    expect(usage(circuits)).toContain("[--include directory...]")
    expect(usage(circuits)).toMatch(/^\$ add --account text /)
  }, 300_000)
})

describe("./mzk: help", () => {
  /** Where the current bundle keeps the help it has printed (scripts/mzk.mjs). */
  const helpDir = () => {
    const current = JSON.parse(readFileSync(join(root, "node_modules", ".mzk-cli", "current.json"), "utf8")) as { dir: string }
    return join(root, "node_modules", ".mzk-cli", current.dir, "help")
  }
  const kept = () => (existsSync(helpDir()) ? readdirSync(helpDir()) : [])
  // Other files' `./mzk … --help` write beside these at the same time: count the ones holding this text.
  const keptWith = (text: string) => kept().filter((name) => readFileSync(join(helpDir(), name), "utf8") === text)

  it("a help is rendered once, kept beside the bundle, and printed from there afterwards", async () => {
    // Any call first, so the bundle is current before its help folder is looked at.
    await mzk("--version")
    for (const file of kept()) rmSync(join(helpDir(), file))
    const first = await mzk("migrate", "--help")
    expect(first.code, first.stderr).toBe(0)
    expect(first.stdout).toContain("Apply pending database migrations")
    expect(keptWith(first.stdout)).toHaveLength(1)
    const file = join(helpDir(), keptWith(first.stdout)[0]!)
    expect(readFileSync(file, "utf8")).toBe(first.stdout)
    const second = await mzk("migrate", "--help")
    expect([second.code, second.stdout, second.stderr]).toEqual([0, first.stdout, ""])

    // What is printed is what was kept: the CLI is not started again for it.
    writeFileSync(file, "kept help\n")
    expect((await mzk("migrate", "--help")).stdout).toBe("kept help\n")
    rmSync(file)

    // Other words are another help; anything beyond a command's name and --help runs the CLI.
    const top = await mzk("--help")
    expect(top.code).toBe(0)
    expect(top.stdout).toContain("mzk COMMAND --help")
    expect(keptWith(top.stdout)).toHaveLength(1)
    const withFlag = await mzk("--log-level", "info", "--help")
    expect(withFlag.code, withFlag.stderr).toBe(0)
    expect(withFlag.stdout).toBe(top.stdout)
    expect(keptWith(top.stdout)).toHaveLength(1)
  }, 300_000)
})

describe("pnpm mzk serve", () => {
  it("Ctrl-C (SIGINT to the process group, pnpm included) stops it cleanly: exit 0, no ELIFECYCLE", async () => {
    const port = await freePort()
    let sent = false
    const ran = await start("pnpm", ["mzk", "serve", "--no-workers", "--port", String(port), "--database", `sqlite:${join(dir, "serve.db")}`], (output, pid) => {
      if (!sent && output.includes(`Listening on http://127.0.0.1:${port}`)) {
        sent = true
        process.kill(-pid, "SIGINT")
      }
    })
    expect(sent, ran.stdout + ran.stderr).toBe(true)
    expect([ran.code, ran.signal], ran.stdout + ran.stderr).toEqual([0, null])
    expect(ran.stdout + ran.stderr).not.toContain("ELIFECYCLE")
    const last = JSON.parse(ran.stdout.trim().split("\n").at(-1)!) as { message: string; annotations: { signal: string } }
    expect(last).toMatchObject({ message: "mzk stopped", annotations: { signal: "SIGINT" } })
  }, 300_000)

  it("a second SIGINT while it stops (what pnpm's forwarding adds to the terminal's) still ends with exit 0", async () => {
    const port = await freePort()
    let sent = false
    const ran = await start(process.execPath, ["scripts/mzk.mjs", "serve", "--no-workers", "--port", String(port), "--database", `sqlite:${join(dir, "twice.db")}`], (output, pid) => {
      if (!sent && output.includes(`Listening on http://127.0.0.1:${port}`)) {
        sent = true
        process.kill(pid, "SIGINT")
        process.kill(pid, "SIGINT")
      }
    })
    expect([ran.code, ran.signal], ran.stdout + ran.stderr).toEqual([0, null])
    expect(ran.stdout.trim().split("\n").at(-1)).toContain("mzk stopped")
  }, 300_000)
})
