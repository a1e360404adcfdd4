// @mzk/prover-native: loads the Node-API addon that `pnpm install` built (scripts/install.mjs), or
// says why it is not there. Plain JavaScript (typed by index.d.ts) so that worker threads load it
// with no TypeScript loader, like circuits/src/proverWorker.mjs.
import { existsSync } from "node:fs"
import { createRequire } from "node:module"
import { fileURLToPath, URL } from "node:url"

const require = createRequire(import.meta.url)
const ADDON = new URL("../build/Release/mzk_prover.node", import.meta.url)

let loaded

/** The addon, or why it cannot be used. Loaded once per thread; never throws. */
export const loadNativeProver = () => {
  if (loaded === undefined) {
    if (!existsSync(ADDON)) {
      loaded = {
        ok: false,
        reason: "the native addon is not built (pnpm install builds it with node-gyp; it needs g++, make, python3 and Node's headers)"
      }
    } else {
      try {
        loaded = { ok: true, addon: require(fileURLToPath(ADDON)) }
      } catch (error) {
        loaded = { ok: false, reason: `the native addon failed to load: ${error instanceof Error ? error.message : String(error)}` }
      }
    }
  }
  return loaded
}
