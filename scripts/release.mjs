#!/usr/bin/env node
// `pnpm release [--out DIR] [--skip-install-check]`: the packages as a release ships them, in one
// folder (default ./release): every public workspace package built (`pnpm build`) and packed
// (`pnpm pack`, whose prepack puts the native addon in @mzk/prover-native), each tarball checked
// by `npm publish --dry-run`, then the whole folder installed into an empty application with plain
// npm, which imports @mzk/server. Publishing is then `npm publish <tarball>` for each, in any order.
import { execFileSync, spawnSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import process from "node:process"
import { parseArgs } from "node:util"
import { fileURLToPath } from "node:url"

const root = dirname(dirname(fileURLToPath(import.meta.url)))

/** Every workspace package that is published: packages/* without `"private": true`. */
export const publicPackages = () =>
  readdirSync(join(root, "packages")).map((name) => join(root, "packages", name))
    .filter((dir) => existsSync(join(dir, "package.json")))
    .map((dir) => ({ dir, manifest: JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) }))
    .filter(({ manifest }) => manifest.private !== true)

/** The tarball name `pnpm pack` gives a package: `@mzk/core` 0.1.0 → `mzk-core-0.1.0.tgz`. */
export const tarballName = (manifest) => `${manifest.name.replace("@", "").replace("/", "-")}-${manifest.version}.tgz`

const step = (what) => process.stdout.write(`release: ${what}\n`)

const run = (command, args, options = {}) => {
  const ran = spawnSync(command, args, { stdio: "inherit", ...options })
  if (ran.status !== 0) throw new Error(`${command} ${args.join(" ")} failed (exit ${ran.status ?? ran.signal})`)
}

/**
 * Builds and packs every public package into `out` (emptied first); returns the tarballs' paths by
 * package name. `check` runs `npm publish --dry-run` on each: what the registry would be sent.
 */
export const packRelease = (out, { check = true, env = process.env } = {}) => {
  rmSync(out, { recursive: true, force: true })
  mkdirSync(out, { recursive: true })
  step("building every package")
  run("pnpm", ["build"], { cwd: root, env })
  const packages = publicPackages()
  const tarballs = {}
  for (const { dir, manifest } of packages) {
    step(`packing ${manifest.name}`)
    run("pnpm", ["pack", "--pack-destination", out], { cwd: dir, env, stdio: ["ignore", "ignore", "inherit"] })
    const file = join(out, tarballName(manifest))
    if (!existsSync(file)) throw new Error(`no tarball for ${manifest.name} in ${out}`)
    tarballs[manifest.name] = file
  }
  if (check) {
    for (const [name, file] of Object.entries(tarballs)) {
      step(`npm publish --dry-run ${name}`)
      execFileSync("npm", ["publish", "--dry-run", "--loglevel=error", file], { cwd: out, env, stdio: ["ignore", "ignore", "inherit"] })
    }
  }
  return tarballs
}

/** An empty application's `package.json` that installs every tarball (and Effect, as an Effect app has it). */
export const appManifest = (tarballs) => ({
  name: "mzk-release-check",
  private: true,
  type: "module",
  dependencies: { effect: "^3.22.4", ...Object.fromEntries(Object.entries(tarballs).map(([name, file]) => [name, `file:${file}`])) }
})

const main = () => {
  const { values } = parseArgs({ options: { out: { type: "string", default: "release" }, "skip-install-check": { type: "boolean", default: false } } })
  const out = resolve(values.out)
  const tarballs = packRelease(out)
  if (!values["skip-install-check"]) {
    const app = mkdtempSync(join(tmpdir(), "mzk-release-app-"))
    try {
      step(`installing the release into an empty application (${app}) with npm`)
      writeFileSync(join(app, "package.json"), JSON.stringify(appManifest(tarballs), null, 2))
      run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: app })
      run(process.execPath, ["--input-type=module", "-e", "const { createMzk } = await import('@mzk/server'); if (typeof createMzk !== 'function') process.exit(1)"], { cwd: app })
    } finally {
      rmSync(app, { recursive: true, force: true })
    }
  }
  step(`${Object.keys(tarballs).length} packages in ${out}: publish each with npm publish <tarball>`)
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    main()
  } catch (error) {
    process.stderr.write(`release: ${error.message}\n`)
    process.exit(1)
  }
}
