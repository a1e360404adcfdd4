// @mzk/prover-native/testing: the test addon (build/Release/mzk_prover_test.node), which a
// checkout's build makes beside the production one: the arithmetic's test entry points (`test`, and
// `testGpu` for the GPU arithmetic run on the CPU), kept out of the addon a service loads. Only
// tests import this; a package carries no test addon, so here it says why there is none. Plain
// JavaScript, like index.js.
import { createRequire } from "node:module"
import { fileURLToPath, URL } from "node:url"

const require = createRequire(import.meta.url)
const FILE = fileURLToPath(new URL("../build/Release/mzk_prover_test.node", import.meta.url))

let loaded

/** The test addon, or why it cannot be used. Loaded once per thread; never throws. */
export const loadNativeTesting = () => {
  if (loaded === undefined) {
    try {
      loaded = { ok: true, addon: require(FILE) }
    } catch (error) {
      loaded = {
        ok: false,
        reason: `the native test addon is not built (a checkout's install builds it with the addon): ${error instanceof Error ? error.message : String(error)}`
      }
    }
  }
  return loaded
}
