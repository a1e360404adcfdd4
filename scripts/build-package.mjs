#!/usr/bin/env node
// Builds the workspace package in the current directory (each package's `build` script runs it):
// tsc over src/ into a fresh dist/ (tsconfig.build.json), then what tsc does not emit but the
// built code needs beside it: plain-JS modules loaded by path at runtime (worker files and the
// modules they import, where a package's tsc does not take JavaScript in) and JSON read with
// `new URL("./x.json", import.meta.url)`; and a
// `#!/usr/bin/env node` line on every `bin` file so npm's links run with plain node.
import { spawnSync } from "node:child_process"
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join, relative } from "node:path"
import process from "node:process"

const pkgDir = process.cwd()
const pkg = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8"))
const src = join(pkgDir, "src")
const dist = join(pkgDir, "dist")

// A file left from an earlier build (a module since deleted) must not ship.
rmSync(dist, { recursive: true, force: true })

const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc")
const built = spawnSync(process.execPath, [tsc, "-p", "tsconfig.build.json"], { cwd: pkgDir, stdio: "inherit" })
if (built.status !== 0) {
  process.stderr.write(`${pkg.name}: tsc failed\n`)
  process.exit(built.status ?? 1)
}

const runtimeFile = (name) => /\.(mjs|cjs|d\.mts|d\.cts|json)$/.test(name)
const copyRuntimeFiles = (dir) => {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const from = join(dir, entry.name)
    if (entry.isDirectory()) copyRuntimeFiles(from)
    else if (runtimeFile(entry.name)) {
      const to = join(dist, relative(src, from))
      // Emitted by tsc (allowJs), with its declarations and source map: that copy stays.
      if (existsSync(to)) continue
      mkdirSync(dirname(to), { recursive: true })
      copyFileSync(from, to)
    }
  }
}
copyRuntimeFiles(src)

const bins = typeof pkg.bin === "string" ? [pkg.bin] : Object.values(pkg.bin ?? {})
for (const bin of bins) {
  const file = join(pkgDir, bin)
  if (!existsSync(file)) {
    process.stderr.write(`${pkg.name}: bin ${bin} was not built\n`)
    process.exit(1)
  }
  const text = readFileSync(file, "utf8")
  if (!text.startsWith("#!")) {
    writeFileSync(file, `#!/usr/bin/env node\n${text}`)
    // One generated line more: an empty first line in the mappings keeps stack traces exact.
    const map = `${file}.map`
    if (existsSync(map)) {
      const json = JSON.parse(readFileSync(map, "utf8"))
      writeFileSync(map, JSON.stringify({ ...json, mappings: `;${json.mappings}` }))
    }
  }
  chmodSync(file, 0o755)
}
