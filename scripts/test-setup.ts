// The suite's global setup, run once before any test file: the CLI's bundle (what `./mzk` runs, and
// the tests that start mzk as a process) made fresh now, so those files do not each find it stale
// and bundle it again at once; and the run's folder for inputs made once and shared between test
// files (packages/proving/test/fixtures/madeOnce.ts), removed when the run ends.
import { mkdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { TestProject } from "vitest/node"
// @ts-expect-error -- plain JavaScript without declarations
import { bundle, freshBundle } from "./bundle-cli.mjs"

export default async function setup(project: TestProject) {
  if (freshBundle() === undefined) await bundle()
  // Every project's setup runs in this one process: the folder is named for it, so all share it.
  const madeOnceDir = join(tmpdir(), `mzk-made-once-${process.pid}`)
  mkdirSync(madeOnceDir, { recursive: true })
  project.provide("madeOnceDir", madeOnceDir)
  return () => rmSync(madeOnceDir, { recursive: true, force: true })
}
