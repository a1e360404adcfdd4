import { Layer } from "effect"
import { Accounts } from "./accounts/service.js"
import { AuditLog, AuditRetentionSweeper } from "./audit/service.js"
import { Circuits } from "./circuits/service.js"
import { ArtifactDownloads } from "./circuits/download.js"
import { CircuitBuildWakeup } from "./circuits/wakeup.js"
import { Events } from "./events/service.js"
import { EventSubscribers } from "./events/subscribers.js"
import { CircuitBuilds } from "./circuits/builds.js"
import { Idempotency, IdempotencySweeper } from "./idempotency/service.js"
import { ProofLoops } from "./proofs/loops.js"
import { UsageReports } from "./usage/service.js"
import { DeliveryEngine } from "./webhooks/delivery/engine.js"
import { Ids } from "./kernel/ids.js"
import { ApiKeys } from "./keys/service.js"
import { Proofs } from "./proofs/service.js"
import { ProofCancelWakeup, ProofWakeup } from "./proofs/wakeup.js"
import { RateLimits } from "./rateLimits/service.js"
import { Verifications } from "./verifications/service.js"
import { Webhooks } from "./webhooks/service.js"
import { EventRetentionSweeper } from "./events/sweeper.js"
import { AbandonedStagingSweeper } from "./circuits/stagingSweeper.js"
import { WebhookRecoveries } from "./webhooks/recovery/recoveries.js"
import { WebhookReplay } from "./webhooks/replay.js"
import { webhookEventSubscriber } from "./webhooks/subscriber.js"
import { DeliveryWakeup } from "./webhooks/delivery/wakeup.js"
import { RecoveryWakeup } from "./webhooks/recovery/wakeup.js"

/**
 * Accounts and their API keys, over what they record into (events, with the webhooks' fan-out,
 * and the audit log) and the id maker: the part of the core that proves nothing, which is all that
 * `mzk accounts create` and `mzk keys …` build, so they load neither circuits nor the prover.
 * `CoreServices` is built over it, so both wire these services the same way.
 */
export const AccountServices = Layer.mergeAll(ApiKeys.layer, Accounts.layer).pipe(
  Layer.provideMerge(Events.layer),
  // Who reacts to a recorded event, fixed here once: webhooks fan it out to deliveries in its transaction.
  Layer.provideMerge(EventSubscribers.layer(webhookEventSubscriber)),
  // Every service that changes keys, webhooks or circuits records it here, in its transaction.
  Layer.provideMerge(AuditLog.layer),
  // Shared by the webhooks' fan-out and WebhookReplay (which nudge) and a DeliveryEngine built over CoreServices (which listens).
  Layer.provideMerge(DeliveryWakeup.layer),
  // Shared by Webhooks and WebhookReplay (which start recoveries) and WebhookRecoveries (which runs them).
  Layer.provideMerge(RecoveryWakeup.layer),
  // One id maker for every service, so ids made in order sort in order.
  Layer.provideMerge(Ids.layer)
)

/**
 * Every core service, built over whatever storage, `Entropy`, `Prover`, `Verifier`, `BuiltinCircuits` and
 * `CircuitCompiler` (whose setup decides which uploads are taken) the caller provides. The one place core services are wired to each other; adapters are chosen by the
 * composition root, and the background loops (`ProofLoops`, `DeliveryEngine.layer`,
 * `CircuitBuilds.layer` with a `CircuitCompiler`) are built over this layer by whichever process
 * runs them.
 */
export const CoreServices = Layer.mergeAll(RateLimits.layer, Webhooks.layer, Idempotency.layer,
  Proofs.layer.pipe(Layer.provide(RateLimits.layer)), UsageReports.layer.pipe(Layer.provide(RateLimits.layer)),
  Verifications.layer.pipe(Layer.provide(RateLimits.layer))).pipe(
  // Downloads find circuits as `Circuits` does, so they sit over it.
  Layer.provideMerge(ArtifactDownloads.layer),
  Layer.provideMerge(Circuits.layer),
  Layer.provideMerge(WebhookReplay.layer),
  // Shared by Proofs (which nudges) and ProofLoops built over CoreServices (which listen).
  Layer.provideMerge(ProofWakeup.layer),
  // Shared by Proofs (which nudges when it cancels a running proof) and the proof worker (which stops it).
  Layer.provideMerge(ProofCancelWakeup.layer),
  // Shared by Circuits (which nudges on uploads) and CircuitBuilds built over CoreServices (which listens).
  Layer.provideMerge(CircuitBuildWakeup.layer),
  Layer.provideMerge(AccountServices)
)

/**
 * Every background loop, built over `CoreServices` by the process that runs them (given a
 * `WebhookTransport` and a `CircuitCompiler`): the proof worker and retention sweeper, webhook
 * delivery and recoveries, circuit builds, the expiry of idempotency keys, and the retention of
 * events and of the audit log.
 */
export const CoreLoops = Layer.mergeAll(
  ProofLoops,
  DeliveryEngine.layer,
  WebhookRecoveries.layer,
  CircuitBuilds.layer,
  IdempotencySweeper,
  EventRetentionSweeper,
  AuditRetentionSweeper,
  AbandonedStagingSweeper
)
