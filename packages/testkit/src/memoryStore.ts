import {
  AccountsRepo,
  ArtifactsRepo,
  AuditRepo,
  CircuitsRepo,
  DeliveriesRepo,
  EventsRepo,
  IdempotencyRepo,
  KeysRepo,
  ProofsRepo,
  RateLimitsRepo,
  RecoveriesRepo,
  type Storage,
  StorageHealth,
  Transactor,
  WebhooksRepo
} from "@mzk/core"
import { Context, Effect, Layer } from "effect"
import { memoryAccounts } from "./memory/accounts.js"
import { memoryArtifacts } from "./memory/artifacts.js"
import { memoryAudit } from "./memory/audit.js"
import { memoryCircuits } from "./memory/circuits.js"
import { makeMemoryDb } from "./memory/db.js"
import { memoryDeliveries } from "./memory/deliveries.js"
import { memoryEvents } from "./memory/events.js"
import { memoryIdempotency } from "./memory/idempotency.js"
import { memoryKeys } from "./memory/keys.js"
import { memoryProofs } from "./memory/proofs.js"
import { memoryRateLimits } from "./memory/rateLimits.js"
import { memoryRecoveries } from "./memory/recoveries.js"
import { memoryWebhooks } from "./memory/webhooks.js"

/**
 * Every storage port in memory: the reference implementation the conformance suite is written
 * against, and a fast store for tests of code built on mzk. One writer at a time; transactions
 * roll back by restoring a snapshot. Writes yield between their check and their change, so a
 * missing lock shows up as a lost race in the conformance suite instead of passing by luck.
 */
export const makeMemoryStore: Effect.Effect<Context.Context<Storage>> = Effect.map(makeMemoryDb, (db) =>
  Context.empty().pipe(
    Context.add(Transactor, { transaction: db.transaction, afterCommit: db.afterCommit }),
    // Memory has no schema to migrate and is always there.
    Context.add(StorageHealth, { check: Effect.succeed({ pendingMigrations: [] }) }),
    Context.add(AccountsRepo, memoryAccounts(db)),
    Context.add(KeysRepo, memoryKeys(db)),
    Context.add(WebhooksRepo, memoryWebhooks(db)),
    Context.add(EventsRepo, memoryEvents(db)),
    Context.add(DeliveriesRepo, memoryDeliveries(db)),
    Context.add(RateLimitsRepo, memoryRateLimits(db)),
    Context.add(ProofsRepo, memoryProofs(db)),
    Context.add(CircuitsRepo, memoryCircuits(db)),
    Context.add(ArtifactsRepo, memoryArtifacts(db)),
    Context.add(IdempotencyRepo, memoryIdempotency(db)),
    Context.add(AuditRepo, memoryAudit(db)),
    Context.add(RecoveriesRepo, memoryRecoveries(db))
  ))

/** A fresh, empty in-memory store per build of the layer. */
export const MemoryStore: Layer.Layer<Storage> = Layer.effectContext(makeMemoryStore)
