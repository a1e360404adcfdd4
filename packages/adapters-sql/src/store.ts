import { AccountsRepo, ArtifactsRepo, AuditRepo, CircuitsRepo, DeliveriesRepo, EventsRepo, IdempotencyRepo, KeysRepo, now, ProofsRepo, RateLimitsRepo, RecoveriesRepo, type Storage, type StorageError, StorageHealth, type StorageStatus, Transactor, VerificationKeysRepo, WebhooksRepo } from "@mzk/core"
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
import { sqlVerificationKeys } from "./repos/verificationKeys.js"
import { sqlWebhooks } from "./repos/webhooks.js"

/**
 * Readiness: the migrations read, then one write of one row (an upsert, so it holds with many
 * processes) that the database must take; what a write meets meets it too (a full or read-only
 * disk, a database file replaced under the process, a read-only standby), at the cost of one
 * small write per probe.
 */
const storageHealth = (conn: SqlConnection): Effect.Effect<StorageStatus, StorageError> => {
  const probe = conn.statement((db, $: { at: string }) =>
    db.insertInto("readiness_probe").values({ id: 1, probed_at: $.at })
      .onConflict((oc) => oc.column("id").doUpdateSet((eb) => ({ probed_at: eb.ref("excluded.probed_at") })))
  )
  const writes: Effect.Effect<StorageStatus> = Effect.flatMap(now, (at) =>
    Effect.match(probe.execute({ at }), {
      onFailure: (writeFailure): StorageStatus => ({ pendingMigrations: [], writeFailure }),
      onSuccess: (): StorageStatus => ({ pendingMigrations: [] })
    }))
  return Effect.flatMap(pendingMigrations(conn), (pending) => (pending.length > 0 ? Effect.succeed({ pendingMigrations: pending }) : writes))
}

/** Every storage port over one SQL connection; the dialect packages supply the connection, with their `SqlDialect`. */
export const sqlStorage = (conn: SqlConnection): Context.Context<Storage> =>
  Context.empty().pipe(
    Context.add(Transactor, { transaction: conn.transaction, afterCommit: conn.afterCommit }),
    Context.add(StorageHealth, { check: storageHealth(conn) }),
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
    Context.add(RecoveriesRepo, sqlRecoveries(conn)),
    Context.add(VerificationKeysRepo, sqlVerificationKeys(conn))
  )
