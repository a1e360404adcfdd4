// Builds the native prover at `pnpm install` (this package's install script). It never fails the
// install: where the build cannot run (no compiler, no Node headers, MZK_NATIVE_BUILD=skip) or
// fails, it says why on stderr and mzk proves with snarkjs instead. Nothing is downloaded: node-gyp
// is the one pnpm (or npm) bundles, and Node's headers must already be on the machine.
import { spawnSync } from "node:child_process"
import { existsSync, readdirSync, rmSync, statSync } from "node:fs"
import { cpus } from "node:os"
import process from "node:process"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const root = dirname(dirname(fileURLToPath(import.meta.url)))
const say = (line) => process.stderr.write(`@mzk/prover-native: ${line}\n`)
const giveUp = (why) => {
  say(`native prover not built (${why}); mzk will prove with snarkjs`)
  // A stale addon from an earlier build must not be loaded in its place.
  rmSync(join(root, "build"), { recursive: true, force: true })
  process.exit(0)
}

if (process.env.MZK_NATIVE_BUILD === "skip") giveUp("MZK_NATIVE_BUILD=skip")

// Every `pnpm install` runs this script again; a build newer than all its inputs is kept
// (MZK_NATIVE_BUILD=force rebuilds anyway). Node-API addons do not depend on the Node version.
const addon = join(root, "build", "Release", "mzk_prover.node")
const inputs = [
  ...readdirSync(join(root, "native")).map((name) => join(root, "native", name)),
  join(root, "binding.gyp"),
  join(root, "scripts", "install.mjs"),
  join(root, "package.json")
]
if (process.env.MZK_NATIVE_BUILD !== "force" && existsSync(addon)) {
  const built = statSync(addon).mtimeMs
  if (inputs.every((file) => statSync(file).mtimeMs < built)) {
    say("native prover up to date")
    process.exit(0)
  }
}

// Node's headers: npm's `nodedir` setting, else the prefix of the running node (a distribution
// package or an official tarball both keep them in <prefix>/include/node).
const headersIn = (dir) => dir && existsSync(join(dir, "include", "node", "node_api.h")) && existsSync(join(dir, "include", "node", "common.gypi"))
const nodedir = [process.env.npm_config_nodedir, dirname(dirname(process.execPath))].find(headersIn)
if (nodedir === undefined) giveUp("Node headers not found: set npm's nodedir or install the Node headers package")

// node-gyp: on PATH inside pnpm's and npm's lifecycle scripts (their bundled copy), or npm's.
const candidates = [
  process.env.npm_config_node_gyp,
  join(dirname(dirname(process.execPath)), "lib", "node_modules", "npm", "node_modules", "node-gyp", "bin", "node-gyp.js")
].filter((p) => p && existsSync(p))
const onPath = spawnSync("node-gyp", ["--version"], { stdio: "ignore", shell: false }).status === 0
const command = onPath ? ["node-gyp", []] : candidates.length > 0 ? [process.execPath, [candidates[0]]] : undefined
if (command === undefined) giveUp("node-gyp not found (it comes with pnpm and npm)")

const jobs = String(Math.max(1, Math.min(4, cpus().length)))
const started = Date.now()
const result = spawnSync(command[0], [...command[1], "rebuild", `--nodedir=${nodedir}`, `--jobs=${jobs}`], {
  cwd: root,
  stdio: ["ignore", "ignore", "pipe"],
  encoding: "utf8",
  env: { ...process.env, npm_config_nodedir: nodedir }
})
if (result.status !== 0) {
  process.stderr.write(result.stderr ?? "")
  giveUp(`node-gyp exited with ${result.status ?? result.signal}`)
}
say(`built in ${((Date.now() - started) / 1000).toFixed(0)} s`)
