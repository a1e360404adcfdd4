#!/usr/bin/env node
// Counts the assertions the whole suite executes (`expect` calls, vitest's own count per test), for
// this checkout and, with `--before REV`, for an earlier commit in a worktree beside it, and prints
// both: a faster suite must not assert less. Each count is a full `vitest run` (with the counter of
// scripts/assertion-counter.ts added to the repository's config), so this takes as long as two runs.
// Each run's summary and its 25 slowest files go to stderr (scripts/slowest-files.ts, for both).
//
//   node scripts/count-assertions.mjs [--before REV | --against FILE] [--save FILE] [--only-before] [--keep]
//
// --save writes the counts as JSON; --against reads an earlier --save as the "before" run instead
// of running it again (the before run of an old commit is as slow as the old suite), and
// --only-before stops after the before run (to save it and compare later).
import { execFileSync, spawnSync } from "node:child_process"
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, relative } from "node:path"
import console from "node:console"
import process from "node:process"
import { fileURLToPath, URL } from "node:url"
import { stripVTControlCharacters } from "node:util"

const root = fileURLToPath(new URL("..", import.meta.url))
const counter = join(root, "scripts", "assertion-counter.ts")
const slowest = join(root, "scripts", "slowest-files.ts")
const args = process.argv.slice(2)
const option = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined)
const before = option("--before")
const against = option("--against")
const save = option("--save")

/** Runs the suite in `dir` with the counter; its assertions per test file and the run's outcome. */
const count = (dir, label) => {
  const out = mkdtempSync(join(tmpdir(), "mzk-assertions-"))
  // A config beside the repository's that adds the counter to its setup files.
  const config = join(dir, "vitest.count.config.ts")
  // Projects declared with `extends: true` inherit the root's setup files.
  writeFileSync(config, `import base from "./vitest.config.ts"
const test = base.test ?? {}
export default { ...base, test: { ...test, setupFiles: [...[test.setupFiles ?? []].flat(), ${JSON.stringify(counter)}], reporters: ["default", ${JSON.stringify(slowest)}] } }
`)
  const started = Date.now()
  process.stderr.write(`${label}: running the suite in ${dir}…\n`)
  const ran = spawnSync("pnpm", ["vitest", "run", "--config", config], {
    cwd: dir,
    env: { ...process.env, MZK_ASSERTION_COUNTS: out, MZK_SLOWEST_FILES: "25" },
    stdio: ["ignore", "pipe", "inherit"],
    maxBuffer: 1024 * 1024 * 1024,
    encoding: "utf8"
  })
  // The run's own summary: its counts, duration and slowest files (the tests' output before it is long).
  const summary = stripVTControlCharacters(ran.stdout ?? "").split("\n")
  const from = summary.findIndex((line) => /^\s*Test Files /.test(line))
  process.stderr.write(`${summary.slice(from < 0 ? -40 : from).join("\n")}\n`)
  rmSync(config, { force: true })
  const files = new Map()
  for (const name of readdirSync(out)) {
    for (const line of readFileSync(join(out, name), "utf8").split("\n").filter(Boolean)) {
      const { file, calls } = JSON.parse(line)
      const key = relative(dir, file)
      files.set(key, (files.get(key) ?? 0) + calls)
    }
  }
  rmSync(out, { recursive: true, force: true })
  return { files, total: [...files.values()].reduce((a, b) => a + b, 0), status: ran.status, seconds: (Date.now() - started) / 1000 }
}

/** A worktree of `rev` beside this checkout, with this checkout's installed packages and native build. */
const worktreeOf = (rev) => {
  const dir = mkdtempSync(join(tmpdir(), "mzk-before-"))
  rmSync(dir, { recursive: true })
  execFileSync("git", ["worktree", "add", "--detach", dir, rev], { cwd: root, stdio: "ignore" })
  const copy = (path) => existsSync(join(root, path)) && cpSync(join(root, path), join(dir, path), { recursive: true, verbatimSymlinks: true })
  copy("node_modules")
  for (const parent of ["packages", "."]) {
    const base = parent === "." ? root : join(root, parent)
    for (const name of readdirSync(base)) {
      const modules = join(parent, name, "node_modules")
      if (name !== "node_modules" && existsSync(join(root, modules)) && existsSync(join(dir, parent, name))) copy(modules)
    }
  }
  copy(join("packages", "prover-native", "build"))
  rmSync(join(dir, "node_modules", ".mzk-cli"), { recursive: true, force: true })
  mkdirSync(join(dir, "node_modules", ".mzk-cli"), { recursive: true })
  return dir
}

const results = []
if (against !== undefined) {
  const saved = JSON.parse(readFileSync(against, "utf8"))
  for (const [label, r] of saved) results.push([label, { ...r, files: new Map(Object.entries(r.files)) }])
}
if (before !== undefined) {
  const dir = worktreeOf(before)
  try {
    results.push([`before (${before})`, count(dir, "before")])
  } finally {
    if (!args.includes("--keep")) execFileSync("git", ["worktree", "remove", "--force", dir], { cwd: root, stdio: "ignore" })
  }
}
if (!args.includes("--only-before")) results.push(["now", count(root, "now")])
if (save !== undefined) {
  writeFileSync(save, JSON.stringify(results.map(([label, r]) => [label, { ...r, files: Object.fromEntries(r.files) }]), null, 1))
}

for (const [label, r] of results) {
  console.log(`${label}: ${r.total} assertions in ${r.files.size} test files (vitest exit ${r.status}, ${r.seconds.toFixed(0)} s)`)
}
if (results.length === 2) {
  const [[, old], [, now]] = results
  const fewer = [...old.files].filter(([file, calls]) => (now.files.get(file) ?? 0) < calls)
  console.log(`${fewer.length} files assert less than before${fewer.length === 0 ? "" : ":"}`)
  for (const [file, calls] of fewer.sort()) console.log(`  ${file}: ${calls} → ${now.files.get(file) ?? 0}`)
}
