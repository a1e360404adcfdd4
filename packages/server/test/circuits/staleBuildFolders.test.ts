// A process killed mid-build (SIGKILL: no finalizer runs) leaves its build folder behind; the next
// process to start removes it, and only the folders of processes that no longer run.
import { makeHttpClient } from "@mzk/testkit"
import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawnSync } from "node:child_process"
import { mkdirSync, readdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe } from "vitest"
import { settle, tempDir } from "./circuits.js"
import { createAccount, mzkRun, serveProcess } from "../processes.js"
import { MUL_SOURCE } from "../../../proving/test/fixtures/mulSource.js"

// Compiling it never ends: circom evaluates the function's loop at compile time.
const ENDLESS = `pragma circom 2.1.0;
function spin() { var x = 0; for (var i = 0; i < 1000000000000; i++) { x += i; } return x; }
template T() { signal input a; signal output b; b <== a * spin(); }
component main = T();
`

describe("build folders of a killed process", () => {
  it.scopedLive("are left by a SIGKILL mid-build and removed when the next process starts; a live process's are kept", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("stale")
      const tmp = join(dir, "tmp")
      mkdirSync(tmp)
      const database = `sqlite:${join(dir, "mzk.db")}`
      const env = { TMPDIR: tmp }
      const builds = () => readdirSync(tmp).filter((name) => name.startsWith("mzk-build-"))
      const first = yield* serveProcess(database, { env, args: ["--dev-ptau", "--dev-ptau-dir", join(dir, "ptau")] })
      const { account_id, api_key: token } = createAccount(database, "Stale")
      const form = new FormData()
      form.append("name", "endless")
      form.append("main", new Blob([ENDLESS]), "main.circom")
      const sent = yield* Effect.promise(() => fetch(`${first.baseUrl}/api/v1/circuits`, { method: "POST", body: form, headers: { authorization: `Bearer ${token}` } }))
      expect(sent.status).toBe(202)
      yield* Effect.promise(() => settle(makeHttpClient(first.baseUrl, { token }), "/api/v1/circuits/endless", () => builds().length > 0, 60_000))
      const left = builds()
      expect(left).toEqual([expect.stringMatching(new RegExp(`^mzk-build-${first.child.pid}-`))])

      first.child.kill("SIGKILL")
      yield* Effect.promise(() => first.exited)
      expect(builds()).toEqual(left)
      // A folder of a process that still runs (this test's) is not the new server's to remove.
      const live = `mzk-build-${process.pid}-keep`
      mkdirSync(join(tmp, live))

      const second = yield* serveProcess(database, { env, args: ["--dev-ptau", "--dev-ptau-dir", join(dir, "ptau")] })
      expect(builds()).toEqual([live])
      expect(second.output()).toContain("removed 1 build folders left by processes that were killed mid-build")

      // A one-shot command sweeps too, and says so on stderr: its stdout (--json) is its answer alone.
      mkdirSync(join(tmp, `mzk-build-${spawnSync(process.execPath, ["-e", "0"]).pid}-gone`))
      const circom = join(dir, "mul.circom")
      writeFileSync(circom, MUL_SOURCE)
      const added = yield* Effect.promise(() =>
        mzkRun("bundle", ["circuits", "add", "mul", "--circom", circom, "--account", account_id, "--database", database, "--dev-ptau", "--dev-ptau-dir", join(dir, "ptau"), "--json"], env))
      expect(added.code, added.stderr).toBe(0)
      expect(JSON.parse(added.stdout)).toMatchObject({ name: "mul", status: "ready" })
      expect(added.stderr).toContain("removed 1 build folders left by processes that were killed mid-build")
      expect(builds()).toEqual([live])
    }), 240_000)
})
