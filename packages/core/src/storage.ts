import type { AccountsRepo } from "./accounts/repo.js"
import type { AuditRepo } from "./audit/repo.js"
import type { ArtifactsRepo, CircuitsRepo } from "./circuits/repo.js"
import type { EventsRepo } from "./events/repo.js"
import type { IdempotencyRepo } from "./idempotency/repo.js"
import type { StorageHealth } from "./kernel/health.js"
import type { Transactor } from "./kernel/transaction.js"
import type { KeysRepo } from "./keys/repo.js"
import type { ProofsRepo } from "./proofs/repo.js"
import type { RateLimitsRepo } from "./rateLimits/repo.js"
import type { DeliveriesRepo } from "./webhooks/delivery/repo.js"
import type { WebhooksRepo } from "./webhooks/endpoints/repo.js"
import type { RecoveriesRepo } from "./webhooks/recovery/repo.js"
import type { VerificationKeysRepo } from "./verifications/repo.js"

/** Everything a store layer provides: one repository per aggregate, the `Transactor` and its health check. */
export type Storage = Transactor | StorageHealth | AccountsRepo | KeysRepo | WebhooksRepo | EventsRepo | DeliveriesRepo | RateLimitsRepo | ProofsRepo
  | CircuitsRepo | ArtifactsRepo | IdempotencyRepo | AuditRepo | RecoveriesRepo | VerificationKeysRepo
