import { AccountsRepo, ArtifactsRepo, AuditRepo, CircuitsRepo, DeliveriesRepo, EventsRepo, IdempotencyRepo, KeysRepo, ProofsRepo, RateLimitsRepo, RecoveriesRepo, type Storage, StorageHealth, Transactor, WebhooksRepo } from "@mzk/core"
import { Context, Effect } from "effect"
import { pendingMigrations } from "./migrations.js"
import type { SqlConnection } from "./connection.js"
import { sqlAccounts } from "./repos/accounts.js"
import { sqlArtifacts } from "./repos/artifacts.js"
import { sqlAudit } from "./repos/audit.js"
import { sqlCircuits } from "./repos/circuits.js"
import { sqlDeliveries } from "./repos/deliveries.js"
import { sqlEvents } from "./repos/events.js"
import { sqlIdempotency } from "./repos/idempotency.js"
import { sqlKeys } from "./repos/keys.js"
import { sqlProofs } from "./repos/proofs.js"
import { sqlRateLimits } from "./repos/rateLimits.js"
import { sqlRecoveries } from "./repos/recoveries.js"
import { sqlWebhooks } from "./repos/webhooks.js"

/** Every storage port over one SQL connection; the dialect packages supply the connection, with their `SqlDialect`. */
export const sqlStorage = (conn: SqlConnection): Context.Context<Storage> =>
  Context.empty().pipe(
    Context.add(Transactor, { transaction: conn.transaction, afterCommit: conn.afterCommit }),
    Context.add(StorageHealth, { check: Effect.map(pendingMigrations(conn), (pending) => ({ pendingMigrations: pending })) }),
    Context.add(AccountsRepo, sqlAccounts(conn)),
    Context.add(KeysRepo, sqlKeys(conn)),
    Context.add(WebhooksRepo, sqlWebhooks(conn)),
    Context.add(EventsRepo, sqlEvents(conn)),
    Context.add(DeliveriesRepo, sqlDeliveries(conn)),
    Context.add(RateLimitsRepo, sqlRateLimits(conn)),
    Context.add(ProofsRepo, sqlProofs(conn)),
    Context.add(CircuitsRepo, sqlCircuits(conn)),
    Context.add(ArtifactsRepo, sqlArtifacts(conn)),
    Context.add(IdempotencyRepo, sqlIdempotency(conn)),
    Context.add(AuditRepo, sqlAudit(conn)),
    Context.add(RecoveriesRepo, sqlRecoveries(conn))
  )
