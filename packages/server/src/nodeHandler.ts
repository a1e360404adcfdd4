import { createMzk } from "./createMzk.js"
import type { MzkOptions } from "./mzk.js"

/**
 * @deprecated Use `createMzk`, which also serves fetch-style frameworks and runs the background
 * loops. Kept for code written against it: it now starts the loops too, so its proofs complete.
 */
export const makeNodeHandler = async (options: MzkOptions) => {
  const mzk = await createMzk({
    database: options.database,
    sessionAuthenticator: options.sessions,
    prover: options.prover,
    proverEngine: options.proverEngine,
    circuits: options.circuits,
    allowInsecureWebhooks: options.allowInsecureWebhooks
  })
  await mzk.start()
  return { handler: mzk.handler, runtime: mzk.runtime, dispose: mzk.stop }
}
