import { Effect, Layer } from "effect"
import type { AccountServicesLive as EagerAccounts } from "../foundation.js"
import type { CoreServicesLive as EagerCore, MzkOptions } from "../mzk.js"

/**
 * The composition root, read when a command runs rather than when the CLI starts: `mzk --help`
 * and a usage mistake never load the server, its drivers or the prover (docs/performance.md,
 * "CLI start-up"). The modules come from the one root, mzk.ts; only their loading is deferred.
 */
export const loadMzk = Effect.promise(() => import("../mzk.js"))

/** `CoreServicesLive(options)`, loaded when the layer is built. */
export const CoreServicesLive = (options: MzkOptions): ReturnType<typeof EagerCore> =>
  Layer.unwrapEffect(Effect.map(loadMzk, (mzk) => mzk.CoreServicesLive(options)))

/**
 * `AccountServicesLive(options)` (foundation.ts), loaded when the layer is built: the accounts and keys
 * commands read the core's accounts and keys over storage, not the circuits, prover or HTTP stack.
 */
export const AccountServicesLive = (options: MzkOptions): ReturnType<typeof EagerAccounts> =>
  Layer.unwrapEffect(Effect.map(Effect.promise(() => import("../foundation.js")), (foundation) => foundation.AccountServicesLive(options)))
