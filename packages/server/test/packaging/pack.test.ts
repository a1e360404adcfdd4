import { freshDatabaseUrl, postgresAvailable } from "@mzk/adapters-postgres/testing"
import { Effect, Exit, Scope } from "effect"
import { execFile, execFileSync } from "node:child_process"
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { delimiter, join } from "node:path"
import { createRequire } from "node:module"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { appManifest, publicPackages, tarballName } from "../../../../scripts/release.mjs"

/**
 * mzk as people install it: every public package built and packed (`pnpm pack`), the tarballs
 * installed with npm into an application outside the workspace (third-party dependencies from
 * the registry), and that application run with plain node, no tsx and no source condition.
 * Slow on purpose (a build of every package and an install from the registry): minutes.
 */

const root = fileURLToPath(new URL("../../../../", import.meta.url))
const fixtures = fileURLToPath(new URL("../fixtures/pack/", import.meta.url))
const inCi = process.env.CI !== undefined && process.env.CI !== "false"
const MINUTE = 60_000

/**
 * The environment of a user's shell: without the workspace's source condition (vitest hands it
 * to every process it starts, and an installed package has no src/ to resolve it to) and
 * without the npm_* settings that `pnpm test` exports to its children.
 */
const userEnv = (): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = {}
  for (const [name, value] of Object.entries(process.env)) if (!/^(npm|pnpm)_/i.test(name)) env[name] = value
  const nodeOptions = (process.env["NODE_OPTIONS"] ?? "").split(/\s+/).filter((o) => o !== "" && !o.includes("@mzk/source")).join(" ")
  if (nodeOptions === "") delete env["NODE_OPTIONS"]
  else env["NODE_OPTIONS"] = nodeOptions
  return env
}

interface Ran {
  readonly stdout: string
  readonly stderr: string
  readonly ms: number
}

const run = (command: string, args: ReadonlyArray<string>, options: { readonly cwd: string; readonly timeout: number; readonly env?: NodeJS.ProcessEnv }) =>
  new Promise<Ran>((resolve, reject) => {
    const started = performance.now()
    execFile(command, args, { cwd: options.cwd, timeout: options.timeout, env: options.env ?? userEnv(), maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      // The exit status rides along as `code`, for the tests that expect a command to fail.
      if (error) reject(Object.assign(new Error(`${command} ${args.join(" ")} failed: ${error.message}\n${stderr}\n${stdout}`.slice(0, 20_000)), { code: error.code }))
      else resolve({ stdout, stderr, ms: performance.now() - started })
    })
  })

const registryProblem = await run("npm", ["ping"], { cwd: tmpdir(), timeout: 20_000 }).then(() => undefined, (error: Error) => error.message.split("\n")[0])
if (registryProblem !== undefined && inCi) throw new Error(`The pack test installs from the npm registry, which is unreachable in CI: ${registryProblem}`)
if (registryProblem !== undefined) console.warn(`Skipping the pack test: the npm registry is unreachable (${registryProblem})`)

/**
 * better-sqlite3 as most of its users get it, a prebuilt binary, rather than compiled from source:
 * an app on SQLite installs it (mzk's optional peer), with prebuild-install, which downloads one
 * from GitHub (unreachable here) and else compiles SQLite for minutes. prebuild-install looks in a local folder first; this puts the
 * workspace's own build there, packed under the name a download would have, and returns the
 * environment that names the folder. Another version than the workspace's still compiles.
 */
const betterSqlitePrebuild = (dir: string): NodeJS.ProcessEnv => {
  const require = createRequire(join(root, "packages", "adapters-sqlite", "package.json"))
  const manifest = require.resolve("better-sqlite3/package.json")
  const packageDir = join(manifest, "..")
  const { version } = JSON.parse(readFileSync(manifest, "utf8")) as { version: string }
  if (!existsSync(join(packageDir, "build", "Release", "better_sqlite3.node"))) return {}
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`
  execFileSync("tar", ["czf", join(dir, name), "build/Release/better_sqlite3.node"], { cwd: packageDir })
  return { npm_config_better_sqlite3_local_prebuilds: dir }
}

/**
 * A folder to put first on the install's PATH, whose C and C++ compilers and `make` only write
 * their command line to `calls` and fail: an install that compiles anything (node-gyp for
 * better-sqlite3 or the native prover) leaves a line there, however its install script copes.
 */
const compilerTraps = (dir: string, calls: string): NodeJS.ProcessEnv => {
  for (const name of ["cc", "gcc", "c++", "g++", "clang", "clang++", "make"]) {
    writeFileSync(join(dir, name), `#!/bin/sh\necho "${name} $*" >> '${calls}'\necho "pack test: ${name} called during the install" >&2\nexit 1\n`, { mode: 0o755 })
  }
  return { PATH: `${dir}${delimiter}${process.env["PATH"] ?? ""}` }
}

/** The last line of a fixture's stdout is its outcome as JSON (mzk's logs come before it). */
const outcomeOf = (ran: Ran) => JSON.parse(ran.stdout.trim().split("\n").at(-1) ?? "null")

/** What a command that was expected to fail said, and its exit status. */
const failureOf = (ran: Promise<Ran>) =>
  ran.then(
    (done) => ({ code: 0, message: `${done.stdout}${done.stderr}` }),
    (error: Error & { readonly code?: number }) => ({ code: error.code, message: error.message })
  )

describe.skipIf(registryProblem !== undefined)("the packed packages in an application outside the workspace", () => {
  let work: string
  let app: string
  let compilerCalls: string
  let betterSqliteInstalled: boolean
  let withoutSqlite: { readonly code: number | undefined; readonly message: string }
  let onPostgres: unknown
  const postgres = Effect.runSync(Scope.make())
  const timings: Record<string, number> = {}

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "mzk-pack-"))
    const tarballs = join(work, "tarballs")
    app = join(work, "app")
    mkdirSync(app)

    // The release as its maintainers make it: `pnpm release` builds and packs every public package
    // into one folder and checks each with `npm publish --dry-run`; the install below is its
    // install check, with more asked of the application.
    const release = await run("pnpm", ["release", "--out", tarballs, "--skip-install-check"], { cwd: root, timeout: 15 * MINUTE })
    timings["pnpm release"] = release.ms
    const packages = publicPackages()
    const files = readdirSync(tarballs)
    expect(files.sort()).toEqual(packages.map(({ manifest }) => tarballName(manifest)).sort())
    for (const { manifest } of packages) expect(release.stdout).toContain(`npm publish --dry-run ${manifest.name}`)
    const manifest = appManifest(Object.fromEntries(packages.map(({ manifest }) => [manifest.name, join(tarballs, tarballName(manifest))])))
    writeFileSync(join(app, "package.json"), JSON.stringify(manifest, null, 2))
    for (const name of readdirSync(fixtures)) copyFileSync(join(fixtures, name), join(app, name))

    const prebuilds = join(work, "prebuilds")
    mkdirSync(prebuilds)
    const traps = join(work, "compilers")
    mkdirSync(traps)
    compilerCalls = join(work, "compiler-calls.log")
    const installEnv = { ...userEnv(), ...compilerTraps(traps, compilerCalls) }
    // Every released package, as an app on PostgreSQL installs them: better-sqlite3 is SQLite's
    // optional peer, so nothing here has a compiler to run.
    const install = await run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: app, timeout: 20 * MINUTE, env: installEnv })
    timings["npm install"] = install.ms
    betterSqliteInstalled = existsSync(join(app, "node_modules", "better-sqlite3"))
    withoutSqlite = await failureOf(run(join(app, "node_modules", ".bin", "mzk"), ["migrate"], { cwd: app, timeout: MINUTE }))
    if (postgresAvailable) {
      const { url } = await Effect.runPromise(Scope.extend(freshDatabaseUrl, postgres))
      onPostgres = outcomeOf(await run(process.execPath, ["embed.mjs", url], { cwd: app, timeout: 4 * MINUTE }))
    }
    // Then SQLite, the embedded default: the app adds better-sqlite3 (prebuilt, see above).
    const { version } = JSON.parse(readFileSync(createRequire(join(root, "packages", "adapters-sqlite", "package.json")).resolve("better-sqlite3/package.json"), "utf8")) as { version: string }
    const sqlite = await run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error", `better-sqlite3@${version}`], {
      cwd: app,
      timeout: 20 * MINUTE,
      env: { ...installEnv, ...betterSqlitePrebuild(prebuilds) }
    })
    timings["npm install better-sqlite3"] = sqlite.ms
  }, 30 * MINUTE)

  afterAll(async () => {
    console.log(`pack test timings: ${Object.entries(timings).map(([k, ms]) => `${k} ${(ms / 1000).toFixed(1)} s`).join(", ")}`)
    await Effect.runPromise(Scope.close(postgres, Exit.void))
    if (work !== undefined && process.env["MZK_KEEP_PACK_APP"] === undefined) rmSync(work, { recursive: true, force: true })
  })

  it("installs every released package compiling nothing, and without better-sqlite3 a SQLite start says what to install", () => {
    expect(betterSqliteInstalled).toBe(false)
    expect(withoutSqlite.code).toBe(1)
    expect(withoutSqlite.message).toContain("SQLite storage needs the better-sqlite3 package, which is not installed: run `npm install better-sqlite3@12`")
  })

  it.skipIf(!postgresAvailable)("embeds mzk on PostgreSQL with nothing compiled: a proof completes and its signed event verifies", () => {
    expect(onPostgres).toMatchObject({ createdStatus: 202, proof: { status: "completed", public_inputs: { c: "33" } }, verified: { status: 200, valid: true } })
  })

  it("installs built JavaScript only: dist, no TypeScript sources; circuits with their artifacts; the native prover prebuilt, compiling nothing", async () => {
    // No compiler ran: not for the native prover, nor for better-sqlite3 (added prebuilt, see above).
    expect(existsSync(compilerCalls) ? readFileSync(compilerCalls, "utf8").trim().split("\n") : []).toEqual([])
    const modules = join(app, "node_modules", "@mzk")
    for (const { manifest } of publicPackages()) {
      const installed = join(modules, manifest.name.slice("@mzk/".length))
      expect(existsSync(installed), manifest.name).toBe(true)
      expect(existsSync(join(installed, "LICENSE")), `${manifest.name} LICENSE`).toBe(true)
      expect(existsSync(join(installed, "README.md")), `${manifest.name} README`).toBe(true)
      if (manifest.name !== "@mzk/prover-native") {
        expect(existsSync(join(installed, "dist", "index.js")), `${manifest.name} dist`).toBe(true)
        expect(existsSync(join(installed, "src")), `${manifest.name} src`).toBe(false)
      }
    }
    expect(readdirSync(join(modules, "proving", "build"))).toContain("manifest.json")
    expect(existsSync(join(modules, "proving", "dist", "prove", "proveThread.mjs"))).toBe(true)
    expect(readFileSync(join(modules, "proving", "LICENSE"), "utf8")).toContain("GNU GENERAL PUBLIC LICENSE")
    // Where this machine built the workspace's addon, the package carries it prebuilt for this
    // platform: the app's install compiled nothing (no build/), and the addon loads with plain node.
    // Elsewhere the install succeeds without it (snarkjs).
    if (existsSync(join(root, "packages", "prover-native", "build", "Release", "mzk_prover.node"))) {
      const native = join(modules, "prover-native")
      expect(readdirSync(join(native, "prebuilds", `${process.platform}-${process.arch}`))).toEqual(["mzk_prover.napi.glibc.node"])
      expect(existsSync(join(native, "build"))).toBe(false)
      const loaded = await run(process.execPath, ["--input-type=module", "-e", "const { loadNativeProver } = await import('@mzk/prover-native'); const r = loadNativeProver(); console.log(JSON.stringify({ ok: r.ok, reason: r.reason, prove: typeof r.addon?.prove }))"], { cwd: app, timeout: MINUTE })
      expect(JSON.parse(loaded.stdout)).toEqual({ ok: true, prove: "function" })
    }
  })

  it("runs the mzk bin with plain node, through npm's link, npx and dist/cli.js, with the CLI's exit codes", async () => {
    const help = await run(join(app, "node_modules", ".bin", "mzk"), ["--help"], { cwd: app, timeout: MINUTE })
    timings["mzk --help"] = help.ms
    expect(help.stdout).toContain("serve")
    expect(help.stdout).toContain("worker")
    // npx finds the app's own bin; operators' service files run the built CLI by its path.
    for (const [command, args] of [["npx", ["--no-install", "mzk", "--help"]], [process.execPath, [join(app, "node_modules", "@mzk", "server", "dist", "cli.js"), "--help"]]] as const) {
      expect((await run(command, args, { cwd: app, timeout: MINUTE })).stdout, command).toBe(help.stdout)
    }
    // A usage mistake exits 2 through the bin, as the CLI documents, and names the command meant.
    const mistyped = await run(join(app, "node_modules", ".bin", "mzk"), ["serv"], { cwd: app, timeout: MINUTE }).then(
      () => undefined,
      (error: Error & { readonly code?: number }) => error
    )
    expect(mistyped?.message).toMatch(/did you mean serve\?/)
    expect(mistyped).toMatchObject({ code: 2 })
  }, 2 * MINUTE)

  it("embeds mzk with createMzk on SQLite: a proof completes, and its signed proof.completed event verifies with @mzk/webhooks", async () => {
    const data = join(work, "data")
    mkdirSync(data)
    const outcome = outcomeOf(await run(process.execPath, ["embed.mjs", `sqlite:${join(data, "mzk.db")}`], { cwd: app, timeout: 4 * MINUTE }))
    expect(outcome).toMatchObject({
      webhookStatus: 201,
      createdStatus: 202,
      proof: { status: "completed", public_inputs: { c: "33" } },
      verified: { status: 200, valid: true },
      event: { type: "proof.completed", proof_id: outcome.proofId, status: "completed" },
      forged: "signature_mismatch"
    })
  }, 5 * MINUTE)

  it("runs the testkit's example in a user's suite: a failing webhook through the whole retry schedule to deactivation", async () => {
    const outcome = outcomeOf(await run(process.execPath, ["retries.mjs"], { cwd: app, timeout: 2 * MINUTE }))
    timings["retry schedule (real time)"] = outcome.elapsedMs
    const HOUR = 60 * MINUTE
    expect(outcome.attempts.map((a: { afterMs: number; statusCode: number }) => [a.afterMs, a.statusCode]))
      .toEqual([0, 30_000, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 8 * HOUR].map((ms) => [ms, 500]))
    expect(outcome.webhook).toEqual({ active: false, disabled_reason: "delivery_failures" })
  }, 2 * MINUTE)
})
