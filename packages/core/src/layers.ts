import { Layer } from "effect"
import { ProofWakeup } from "./proofs/wakeup.js"
import { Accounts } from "./services/accounts.js"
import { ApiKeys } from "./services/apiKeys.js"
import { Events } from "./services/events.js"
import { Proofs } from "./services/proofs.js"
import { RateLimits } from "./services/rateLimits.js"
import { Webhooks } from "./services/webhooks.js"
import { DeliveryWakeup } from "./webhooks/wakeup.js"

/**
 * Every core service, built over whatever storage and `Entropy` the caller provides. The one
 * place core services are wired to each other; adapters are chosen by the composition root.
 */
export const CoreServices = Layer.mergeAll(ApiKeys.layer, Accounts.layer, RateLimits.layer, Webhooks.layer,
  Proofs.layer.pipe(Layer.provide(RateLimits.layer))).pipe(
  Layer.provideMerge(Events.layer),
  // Shared by Events (which nudges) and a DeliveryEngine built over CoreServices (which listens).
  Layer.provideMerge(DeliveryWakeup.layer),
  // Shared by Proofs (which nudges) and ProofLoops built over CoreServices (which listen).
  Layer.provideMerge(ProofWakeup.layer)
)
