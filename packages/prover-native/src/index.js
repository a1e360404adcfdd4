// @mzk/prover-native: loads the Node-API addon, the one compiled at install (build/Release) or the
// one the package carries prebuilt for this platform (prebuilds/, found by node-gyp-build's rules),
// or says why there is none. Plain JavaScript (typed by index.d.ts) so that worker threads load it
// with no TypeScript loader, like packages/proving/src/prove/proveThread.mjs.
import { existsSync } from "node:fs"
import { createRequire } from "node:module"
import { fileURLToPath, URL } from "node:url"

const require = createRequire(import.meta.url)
const ROOT = fileURLToPath(new URL("..", import.meta.url))
// The compiled addon by name: in a checkout build/Release also holds the test addon (testing.js),
// and node-gyp-build would load whichever .node file it lists there first.
const BUILT = fileURLToPath(new URL("../build/Release/mzk_prover.node", import.meta.url))
// `globalThis.process` rather than `import process from "node:process"`: the ESM facade of that
// module reads every property of process, stdin included, which opens stdin in an embedding
// application that never asked for it (embedding.test.ts checks what stop() leaves open).
/** The addon is built against Node-API 8 (binding.gyp's NAPI_VERSION). */
const NAPI_VERSION = 8

let loaded

/** The addon, or why it cannot be used. Loaded once per thread; never throws. */
export const loadNativeProver = () => {
  if (loaded === undefined) {
    let file
    try {
      file = existsSync(BUILT) ? BUILT : require("node-gyp-build").path(ROOT)
    } catch {
      file = undefined
    }
    if (Number(globalThis.process.versions.napi ?? 0) < NAPI_VERSION) {
      loaded = { ok: false, reason: `the native addon needs Node-API ${NAPI_VERSION}; this Node has ${globalThis.process.versions.napi ?? "none"}` }
    } else if (file === undefined) {
      loaded = {
        ok: false,
        reason:
          "the native addon is not built and no prebuilt one matches this platform (the install compiles it with node-gyp; it needs g++, make, python3 and Node's headers)"
      }
    } else {
      try {
        loaded = { ok: true, addon: require(file) }
      } catch (error) {
        loaded = { ok: false, reason: `the native addon failed to load: ${error instanceof Error ? error.message : String(error)}` }
      }
    }
  }
  return loaded
}
