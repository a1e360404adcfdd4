// Run before this package is packed (`prepack`; `postpack` runs it with --clean): puts the addon
// built from this checkout's sources into prebuilds/<platform>-<arch>/, named as node-gyp-build
// matches it (Node-API, so any Node version with Node-API 8; glibc or musl), so that installing the
// tarball on the same platform loads it and compiles nothing (scripts/install.mjs). The build is
// brought up to date first, so a package never carries an addon older than its C++ sources.
import { spawnSync } from "node:child_process"
import { copyFileSync, existsSync, mkdirSync, rmSync } from "node:fs"
import { arch, platform } from "node:os"
import process from "node:process"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const root = dirname(dirname(fileURLToPath(import.meta.url)))
const prebuilds = join(root, "prebuilds")
const say = (line) => process.stderr.write(`@mzk/prover-native: ${line}\n`)

// The prebuilds exist only between prepack and postpack: in a checkout they would shadow nothing
// (a build in build/ comes first) but could outlive the sources they were built from.
rmSync(prebuilds, { recursive: true, force: true })
if (process.argv.includes("--clean")) process.exit(0)

const built = spawnSync(process.execPath, [join(root, "scripts", "install.mjs")], { stdio: "inherit" })
const addon = join(root, "build", "Release", "mzk_prover.node")
if (built.status !== 0 || !existsSync(addon)) {
  // A package without a prebuild still installs (its install compiles the addon or mzk proves with
  // snarkjs), but a release should not lose the prebuild by accident: that takes MZK_NATIVE_BUILD=skip.
  if (process.env.MZK_NATIVE_BUILD === "skip") {
    say("MZK_NATIVE_BUILD=skip: packed without a prebuilt addon; installs will compile it or prove with snarkjs")
    process.exit(0)
  }
  say("no addon to ship (the build failed, see above); MZK_NATIVE_BUILD=skip packs without one")
  process.exit(1)
}
const libc = platform() === "linux" ? (existsSync("/etc/alpine-release") ? ".musl" : ".glibc") : ""
const folder = join(prebuilds, `${platform()}-${arch()}`)
mkdirSync(folder, { recursive: true })
copyFileSync(addon, join(folder, `mzk_prover.napi${libc}.node`))
say(`packed the addon prebuilt for ${platform()}-${arch()}${libc.replace(".", " ")}`)
