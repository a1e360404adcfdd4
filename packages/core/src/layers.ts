import { Layer } from "effect"
import { Accounts } from "./services/accounts.js"
import { ApiKeys } from "./services/apiKeys.js"
import { Events } from "./services/events.js"
import { RateLimits } from "./services/rateLimits.js"

/**
 * Every core service, built over whatever storage and `Entropy` the caller provides. The one
 * place core services are wired to each other; adapters are chosen by the composition root.
 */
export const CoreServices = Layer.mergeAll(ApiKeys.layer, Accounts.layer, RateLimits.layer).pipe(
  Layer.provideMerge(Events.layer)
)
