#!/usr/bin/env node
// `pnpm build`: runs the `build` script of every workspace package that has one, each after the
// workspace packages it depends on at runtime. Not `pnpm -r build`: pnpm orders by every kind of
// dependency, and the runtime order is what a build needs; the structure test keeps the
// package.json files free of cycles of any kind.
import { spawn } from "node:child_process"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { availableParallelism } from "node:os"
import { dirname, join } from "node:path"
import process from "node:process"
import { fileURLToPath } from "node:url"

const root = dirname(dirname(fileURLToPath(import.meta.url)))
const dirs = readdirSync(join(root, "packages")).map((name) => join("packages", name))
  .filter((dir) => existsSync(join(root, dir, "package.json")))
const packages = new Map()
for (const dir of dirs) {
  const manifest = JSON.parse(readFileSync(join(root, dir, "package.json"), "utf8"))
  if (manifest.scripts?.build === undefined) continue
  packages.set(manifest.name, { dir, manifest })
}
const needs = (manifest) =>
  Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies }).filter((name) => packages.has(name) && name !== manifest.name)

const done = new Set()
const running = new Map()
const limit = Math.max(1, Math.min(4, availableParallelism()))

const build = (name) =>
  new Promise((resolve, reject) => {
    const { dir } = packages.get(name)
    const started = Date.now()
    const child = spawn("pnpm", ["run", "--silent", "build"], { cwd: join(root, dir), stdio: "inherit" })
    child.on("error", reject)
    child.on("exit", (code) => {
      if (code !== 0) reject(new Error(`${name}: build exited with ${code}`))
      else {
        process.stdout.write(`built ${name} in ${((Date.now() - started) / 1000).toFixed(1)} s\n`)
        resolve(name)
      }
    })
  })

while (done.size < packages.size) {
  const ready = [...packages.keys()].filter((name) => !done.has(name) && !running.has(name) && needs(packages.get(name).manifest).every((dep) => done.has(dep)))
  for (const name of ready.slice(0, limit - running.size)) running.set(name, build(name))
  if (running.size === 0) {
    process.stderr.write(`dependency cycle among ${[...packages.keys()].filter((n) => !done.has(n)).join(", ")}\n`)
    process.exit(1)
  }
  try {
    const finished = await Promise.race(running.values())
    running.delete(finished)
    done.add(finished)
  } catch (error) {
    process.stderr.write(`${error.message}\n`)
    process.exit(1)
  }
}
