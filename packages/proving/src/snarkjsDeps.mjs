// snarkjs's own dependencies (circom_runtime's witness calculator, ffjavascript's curves), resolved
// from snarkjs so they are the very modules it uses: their ES module builds, `main.js` next to
// `build/main.cjs`. Plain JS, for the prover threads and the build process alike.
// @ts-check
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { pathToFileURL } from "node:url"

const fromSnarkjs = createRequire(createRequire(import.meta.url).resolve("snarkjs"))

/**
 * One of snarkjs's own dependencies by package name; they ship no types, so each caller states the
 * little it uses.
 * @param {string} name
 * @returns {Promise<any>}
 */
export const snarkjsDependency = (name) => import(pathToFileURL(join(dirname(fromSnarkjs.resolve(name)), "..", "main.js")).href)

/**
 * The workerData a thread that loads snarkjs needs: ffjavascript imports the `web-worker` package,
 * which assumes every non-main thread is one it started and, on import, loads `workerData.mod` as
 * the thread's script. This gives it an empty module, so it does nothing.
 * @param {string} name
 */
export const snarkjsThreadData = (name) => ({ mod: "data:text/javascript,", type: /** @type {const} */ ("module"), name })
