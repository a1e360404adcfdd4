#!/usr/bin/env node
// The `mzk` command of an installed @mzk/server: it runs the built CLI, dist/cli.js (which
// `node …/dist/cli.js` also runs). A committed file rather than dist/cli.js itself, because pnpm
// links the bin of every workspace package at install, before anything is built, and a bin that
// does not exist yet is a warning for each package that depends on this one.
import { existsSync } from "node:fs"
import process from "node:process"
import { URL } from "node:url"

const cli = new URL("../dist/cli.js", import.meta.url)
if (!existsSync(cli)) {
  process.stderr.write("mzk: @mzk/server is not built (no dist/cli.js): run `pnpm build` first, or `./mzk` from the repository's root\n")
  process.exit(1)
}
await import(cli.href)
