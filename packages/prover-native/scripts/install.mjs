// Readies the native prover at install (this package's install script). A package packed on this
// platform carries the addon prebuilt (scripts/prebuild.mjs): when it loads, nothing is compiled.
// Otherwise (a checkout, another platform, MZK_NATIVE_BUILD=force) the addon is compiled from its
// C++, printing each source file as it goes. It never fails the install: where the build cannot run
// (no compiler, no Node headers, MZK_NATIVE_BUILD=skip) or fails, it says why on stderr and mzk
// proves with snarkjs instead. Nothing is downloaded: node-gyp is the one pnpm (or npm) bundles, and
// Node's headers must already be on the machine.
import { spawn, spawnSync } from "node:child_process"
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs"
import { createRequire } from "node:module"
import { cpus } from "node:os"
import process from "node:process"
import { dirname, join, relative } from "node:path"
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

// The prebuilt addon, where one matches this platform, architecture and C library (node-gyp-build's
// rules, prebuilds only) and loads; a binary that does not load here (an older glibc) is compiled.
const prebuilt = async () => {
  process.env.PREBUILDS_ONLY = "1"
  try {
    const { default: nodeGypBuild } = await import("node-gyp-build")
    const file = nodeGypBuild.path(root)
    createRequire(import.meta.url)(file)
    return file
  } catch {
    return undefined
  } finally {
    delete process.env.PREBUILDS_ONLY
  }
}
if (process.env.MZK_NATIVE_BUILD !== "force") {
  const file = await prebuilt()
  if (file !== undefined) {
    say(`using the prebuilt addon ${relative(root, file)}: nothing to compile`)
    process.exit(0)
  }
}

// Every `pnpm install` runs this script again; a build newer than all its inputs is kept
// (MZK_NATIVE_BUILD=force rebuilds anyway). Node-API addons do not depend on the Node version.
// In a checkout (test/ is there) binding.gyp also builds the test addon, which the tests load.
const withTests = existsSync(join(root, "test"))
const addon = join(root, "build", "Release", "mzk_prover.node")
const outputs = [addon, ...(withTests ? [join(root, "build", "Release", "mzk_prover_test.node")] : [])]
const inputs = [
  // Recursive: the GPU arithmetic lives in native/gpu/, and an edit there leaves native/'s own time as it was.
  // (its .cu files are nvcc's alone: no addon is built from them).
  ...readdirSync(join(root, "native"), { recursive: true, encoding: "utf8" }).filter((name) => !/\.cuh?$/.test(name)).map((name) => join(root, "native", name)),
  join(root, "binding.gyp"),
  join(root, "scripts", "install.mjs"),
  join(root, "package.json")
]
if (process.env.MZK_NATIVE_BUILD !== "force" && outputs.every((file) => existsSync(file))) {
  const built = Math.min(...outputs.map((file) => statSync(file).mtimeMs))
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

// make names each object and library as it starts it (`CXX(target) …/kernel_adx.o`): one progress
// line per C++ file, since the whole build takes a minute or more and would otherwise say nothing.
const gyp = readFileSync(join(root, "binding.gyp"), "utf8")
const sources = new Set((gyp.match(/native\/[\w./]+\.cpp/g) ?? []).filter((file) => withTests || !/(^|\/)test_/.test(file)))
const jobs = String(Math.max(1, Math.min(4, cpus().length)))
const started = Date.now()
const seconds = () => `${((Date.now() - started) / 1000).toFixed(0)} s`
say(`compiling the native prover from C++ (${sources.size} files, ${jobs} at a time; a minute or two)`)
const child = spawn(command[0], [...command[1], "rebuild", `--nodedir=${nodedir}`, `--jobs=${jobs}`], {
  cwd: root,
  stdio: ["ignore", "pipe", "pipe"],
  env: { ...process.env, npm_config_nodedir: nodedir }
})
let compiled = 0
let pending = ""
child.stdout.setEncoding("utf8").on("data", (chunk) => {
  const lines = (pending + chunk).split("\n")
  pending = lines.pop() ?? ""
  for (const line of lines) {
    const object = /CXX\(target\) \S*?\/(native\/[\w./]+)\.o\b/.exec(line)
    if (object) say(`  [${++compiled}/${sources.size}] ${object[1]}.cpp (at ${seconds()})`)
  }
})
let errors = ""
child.stderr.setEncoding("utf8").on("data", (chunk) => {
  errors += chunk
})
const [code, signal] = await new Promise((resolve) => child.on("close", (c, s) => resolve([c, s])))
if (code !== 0) {
  process.stderr.write(errors)
  giveUp(`node-gyp exited with ${code ?? signal}`)
}
say(`built in ${seconds()}`)
