import { eventually, type HttpClient, makeHttpClient } from "@mzk/testkit"
import { Effect, type Scope } from "effect"
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

/**
 * mzk as its own OS process, as an operator runs it: the one harness of the tests that start the
 * CLI (`mzk serve`, `mzk accounts create`), kill it and start it again.
 */
export const root = fileURLToPath(new URL("../../..", import.meta.url))

/**
 * How a test runs the CLI: as the README runs it, `./mzk` (the bundle scripts/mzk.mjs runs, remade
 * first when a source changed, so it is the code under test), or from the TypeScript sources
 * through tsx. The bundle is the default: it starts in a fifth of tsx's CPU time, and the suite
 * starts mzk hundreds of times; the proving matrix runs every way in, sources included.
 */
export type Entry = "sources" | "bundle"
const CLI: Record<Entry, ReadonlyArray<string>> = {
  sources: ["--import", "tsx", "packages/server/src/cli.ts"],
  bundle: ["scripts/mzk.mjs"]
}

/** A loopback port nothing listens on right now. */
export const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })

/** Runs one `mzk` command to its end; its standard output. */
export const mzk = (...args: Array<string>) => mzkVia("bundle", ...args)

/** `mzk …` run through `entry` to its end; its standard output. */
export const mzkVia = (entry: Entry, ...args: Array<string>) =>
  execFileSync(process.execPath, [...CLI[entry], ...args], { cwd: root, encoding: "utf8" })

/** How a one-off `mzk` command ended, and what it printed. */
export interface MzkRan {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/**
 * `mzk …` through `entry` to its end without holding this process's event loop (so several run at
 * once, and servers in this process keep answering): its exit code and output, whatever the code.
 */
export const mzkRun = (entry: Entry, args: ReadonlyArray<string>, env: Readonly<Record<string, string>> = {}): Promise<MzkRan> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...CLI[entry], ...args], { cwd: root, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk) => (stdout += chunk))
    child.stderr.on("data", (chunk) => (stderr += chunk))
    child.once("error", reject)
    child.once("close", (code) => resolve({ code, stdout, stderr }))
  })

/** `mzk …` that is expected to fail: its exit status and what it printed. */
export const mzkFails = (...args: Array<string>) => {
  try {
    mzk(...args)
  } catch (error) {
    const failed = error as { status: number; stdout: string; stderr: string }
    return { status: failed.status, output: `${failed.stdout}${failed.stderr}` }
  }
  throw new Error(`mzk ${args.join(" ")} succeeded`)
}

/** `mzk accounts create --json` on `database`: the account and its first key. */
export const createAccount = (database: string, name: string, entry: Entry = "bundle") =>
  JSON.parse(mzkVia(entry, "accounts", "create", "--name", name, "--database", database, "--json")) as { account_id: string; api_key: string }

/** A SQLite file in a fresh folder, removed when the scope closes; `database` is its `--database` URL. */
export const tempSqlite = (prefix: string): Effect.Effect<{ readonly file: string; readonly database: string }, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const dir = mkdtempSync(join(tmpdir(), `mzk-${prefix}-`))
      const file = join(dir, "mzk.db")
      return { dir, file, database: `sqlite:${file}` }
    }),
    ({ dir }) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  )

export interface MzkProcess {
  readonly child: ChildProcess
  /** What the process wrote to stdout and stderr so far. */
  readonly output: () => string
  /** Resolves with the exit code and signal once the process has ended. */
  readonly exited: Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>
}

/** `mzk …args` as a long-running process (`serve`, `worker`), killed with SIGKILL when the scope closes if it still runs. */
export const mzkProcess = (
  args: ReadonlyArray<string>,
  entry: Entry = "bundle",
  env: Readonly<Record<string, string>> = {}
): Effect.Effect<MzkProcess, never, Scope.Scope> =>
  Effect.gen(function*() {
    const child = yield* Effect.acquireRelease(
      Effect.sync(() => spawn(process.execPath, [...CLI[entry], ...args], { cwd: root, env: { ...process.env, ...env } })),
      (child) => Effect.sync(() => child.exitCode === null && child.signalCode === null && child.kill("SIGKILL"))
    )
    let output = ""
    child.stdout!.on("data", (chunk) => (output += chunk))
    child.stderr!.on("data", (chunk) => (output += chunk))
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once("exit", (code, signal) => resolve({ code, signal }))
    )
    return { child, output: () => output, exited }
  })

export interface ServeProcess extends MzkProcess {
  readonly baseUrl: string
  /** A client of this server, with `token` as its bearer token if given. */
  readonly client: (token?: string) => HttpClient
}

/**
 * `mzk serve --port <port> --database <database> …args`, answering requests when this returns
 * (a slow, loaded machine may take tens of seconds to start it: up to a minute is waited for), and killed with SIGKILL when the scope closes if
 * it still runs.
 */
export const serveProcess = (
  database: string,
  options: {
    readonly port?: number
    readonly args?: ReadonlyArray<string>
    readonly upWithinMs?: number
    readonly entry?: Entry
    /** Over the test process's environment. */
    readonly env?: Readonly<Record<string, string>>
  } = {}
): Effect.Effect<ServeProcess, never, Scope.Scope> =>
  Effect.gen(function*() {
    const port = options.port ?? (yield* Effect.promise(freePort))
    const server = yield* mzkProcess(["serve", "--port", String(port), "--database", database, ...(options.args ?? [])], options.entry, options.env)
    const baseUrl = `http://127.0.0.1:${port}`
    const probe = makeHttpClient(baseUrl, { keepAlive: false, timeoutMs: 2_000 })
    yield* Effect.promise(() => eventually(() => probe.send("GET", "/api/v1/openapi.json").then(() => true), options.upWithinMs ?? 60_000, 50))
    // A request may wait behind proofs and builds on a loaded machine: a minute guards against a hang.
    const client = (token?: string) => makeHttpClient(baseUrl, { timeoutMs: 60_000, ...(token === undefined ? {} : { token }) })
    return { ...server, baseUrl, client }
  })
