import { Clock, Context, Effect, Layer, Option, Schema } from "effect"
import { EventsConfig } from "../../events/config.js"
import { invalidRequest } from "../../kernel/decode.js"
import { Ids } from "../../kernel/ids.js"
import { runLeasedJobs } from "../../kernel/leasedJobs.js"
import { now, type Timestamp, timestampFromMillis } from "../../kernel/time.js"
import { Transactor } from "../../kernel/transaction.js"
import type { RecoveryProgress, RecoveryRecord } from "./recovery.js"
import { DeliveriesRepo } from "../delivery/repo.js"
import { DeliveryWakeup } from "../delivery/wakeup.js"
import { WebhooksRepo } from "../endpoints/repo.js"
import { RecoveriesRepo } from "./repo.js"
import { RecoveryWakeup } from "./wakeup.js"
import type { WebhookRecord } from "../endpoints/webhook.js"

/** How recoveries run. */
export interface RecoveryConfigShape {
  /** Deliveries re-queued per batch: one short transaction each. */
  readonly batchSize: number
  /** Recoveries this process works on at once. */
  readonly concurrency: number
  /** How long a claim holds one batch before another worker may take it over. */
  readonly leaseMs: number
  /** Idle recovery loops look for work this often (recoveries asked in-process wake them at once). */
  readonly pollIntervalMs: number
}

export const DEFAULT_RECOVERY_CONFIG: RecoveryConfigShape = {
  batchSize: 200,
  concurrency: 1,
  leaseMs: 60_000,
  pollIntervalMs: 5_000
}

export class RecoveryConfig extends Context.Reference<RecoveryConfig>()("@mzk/core/RecoveryConfig", {
  defaultValue: (): RecoveryConfigShape => DEFAULT_RECOVERY_CONFIG
}) {}

/**
 * Starting a recovery, shared by `POST /webhooks/{id}/recover` and a re-enabling PATCH with
 * `recover_since`: the check of `since` and the insert of the running recovery.
 */
export const makeRecoveryStarter = Effect.gen(function*() {
  const repo = yield* RecoveriesRepo
  const ids = yield* Ids
  const tx = yield* Transactor
  // Optional, as the delivery engine's: a core built without the loops still records recoveries.
  const wakeup = yield* Effect.serviceOption(RecoveryWakeup)
  const { retentionMs } = yield* EventsConfig

  /**
   * 400 naming `path` unless `since` is inside the event retention window (older deliveries are
   * deleted with their events) and not in the future.
   */
  const checkSince = (since: Timestamp, path: string) =>
    Effect.gen(function*() {
      const nowMs = yield* Clock.currentTimeMillis
      const oldest = timestampFromMillis(nowMs - retentionMs)
      if (since < oldest) {
        return yield* invalidRequest([{ path, message: `must not be before ${oldest}: events older than the retention window are deleted` }])
      }
      if (since > timestampFromMillis(nowMs)) {
        return yield* invalidRequest([{ path, message: `must not be in the future (it is now ${timestampFromMillis(nowMs)})` }])
      }
    })

  /** A running recovery of `webhook` from `since` up to now, inside the caller's transaction; the loop is woken once it commits. */
  const start = (webhook: WebhookRecord, since: Timestamp) =>
    Effect.gen(function*() {
      const at = yield* now
      const record: RecoveryRecord = {
        id: yield* ids.make("recovery"),
        account_id: webhook.account_id,
        webhook_id: webhook.id,
        status: "running",
        since,
        until: at,
        requeued: 0,
        created_at: at,
        completed_at: null,
        cursor: null,
        lease_expires_at: null,
        updated_at: at
      }
      yield* repo.insert(record)
      if (Option.isSome(wakeup)) yield* tx.afterCommit(wakeup.value.notify)
      return record
    })

  return { checkSince, start }
})

/** The batch's claim was lost (its lease lapsed and another worker took it) before it was recorded: its writes are undone. */
class ClaimLost extends Schema.TaggedError<ClaimLost>()("ClaimLost", {}) {}

/**
 * The recovery loop: claims running recoveries and runs one batch of each per claim: re-queues the
 * next `batchSize` failed or cancelled deliveries after its cursor and records the progress, in one
 * transaction, fenced by the claim's lease. A recovery with more to do is left claimable and the
 * loop woken, so batches follow each other at once while recoveries of several webhooks take
 * turns, and no transaction is long. A recovery of a webhook that was switched off or removed
 * meanwhile ends `cancelled`: its deliveries would only be cancelled again.
 */
export class WebhookRecoveries extends Context.Tag("@mzk/core/WebhookRecoveries")<WebhookRecoveries, {
  /** Batches this process is running now. */
  readonly inFlight: Effect.Effect<number>
}>() {
  static readonly layer = Layer.scoped(
    this,
    Effect.gen(function*() {
      const tx = yield* Transactor
      const repo = yield* RecoveriesRepo
      const deliveries = yield* DeliveriesRepo
      const webhooks = yield* WebhooksRepo
      const wakeup = yield* RecoveryWakeup
      const deliveryWakeup = yield* DeliveryWakeup
      const config = yield* RecoveryConfig

      const runBatch = (recovery: RecoveryRecord) =>
        tx.transaction(Effect.gen(function*() {
          const at = yield* now
          const webhook = yield* webhooks.get(recovery.account_id, recovery.webhook_id)
          let progress: RecoveryProgress
          if (Option.isNone(webhook) || !webhook.value.active) {
            progress = { status: "cancelled", cursor: recovery.cursor, requeued: recovery.requeued, completed_at: at, updated_at: at }
          } else {
            const batch = yield* deliveries.requeueFailed({
              webhookId: recovery.webhook_id,
              since: recovery.since,
              until: recovery.until,
              after: recovery.cursor,
              limit: config.batchSize,
              at
            })
            const done = batch.scanned < config.batchSize
            progress = {
              status: done ? "completed" : "running",
              cursor: batch.last ?? recovery.cursor,
              requeued: recovery.requeued + batch.requeued,
              completed_at: done ? at : null,
              updated_at: at
            }
            if (batch.requeued > 0) yield* tx.afterCommit(deliveryWakeup.notify)
          }
          if (!(yield* repo.advance(recovery.id, recovery.lease_expires_at!, progress))) return yield* new ClaimLost()
          if (progress.status !== "running") {
            yield* tx.afterCommit(Effect.annotateLogs(Effect.logInfo(`webhook recovery ${progress.status}`), {
              recovery_id: recovery.id,
              webhook_id: recovery.webhook_id,
              account_id: recovery.account_id,
              requeued: progress.requeued
            }))
          }
        })).pipe(Effect.catchTag("ClaimLost", () => Effect.void))

      return yield* runLeasedJobs({
        name: "webhook recoveries",
        capacity: config.concurrency,
        leaseMs: config.leaseMs,
        pollIntervalMs: config.pollIntervalMs,
        wakeup,
        claim: repo.claim,
        run: runBatch,
        release: (recovery) => repo.release(recovery.id, recovery.lease_expires_at!),
        describe: (recovery) => `webhook recovery ${recovery.id}`
      })
    })
  )
}
