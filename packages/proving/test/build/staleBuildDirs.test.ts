import { spawnSync } from "node:child_process"
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { removeStaleBuildDirs } from "../../src/build/compiler.js"

const workDir = mkdtempSync(join(tmpdir(), "mzk-stale-"))
afterAll(() => rmSync(workDir, { recursive: true, force: true }))

describe("removeStaleBuildDirs", () => {
  it("removes the build folders of processes that no longer run, and nothing else", () => {
    // A pid that ran and ended.
    const dead = spawnSync(process.execPath, ["-e", "0"]).pid
    const names = [`mzk-build-${dead}-abc`, `mzk-build-${process.pid}-def`, `mzk-build-1-init`, "mzk-build-x-y", "mzk-artifacts", "other"]
    for (const name of names) mkdirSync(join(workDir, name))
    expect(removeStaleBuildDirs({ workDir })).toEqual([`mzk-build-${dead}-abc`])
    expect(readdirSync(workDir).sort()).toEqual(names.slice(1).sort())
    expect(removeStaleBuildDirs({ workDir: join(workDir, "missing") })).toEqual([])
  })
})
