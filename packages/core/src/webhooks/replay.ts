import { Context, Effect, Layer, Option, Schema } from "effect"
import { type EventEnvelope, type EventType, toEnvelope } from "../events/event.js"
import { EventsRepo } from "../events/repo.js"
import { Events } from "../events/service.js"
import {
  DeliveryNotFound,
  DeliveryPending,
  type InvalidRequest,
  RecoveryNotFound,
  type StorageError,
  WebhookInactive,
  type WebhookNotFound
} from "../kernel/errors.js"
import { type AccountId, DeliveryId, RecoveryId } from "../kernel/ids.js"
import { pageOf, type PageQuery } from "../kernel/paging.js"
import { now } from "../kernel/time.js"
import { Transactor } from "../kernel/transaction.js"
import { type Delivery, type DeliveryRecord, toDelivery } from "./delivery/delivery.js"
import { makeRecoveryStarter } from "./recovery/recoveries.js"
import { type Recovery, type RecoverWebhookInput, toRecovery } from "./recovery/recovery.js"
import { makeDeliveryQueue } from "./delivery/queue.js"
import { DeliveriesRepo } from "./delivery/repo.js"
import { WebhooksRepo } from "./endpoints/repo.js"
import { RecoveriesRepo } from "./recovery/repo.js"
import { findWebhook } from "./service.js"
import { DeliveryWakeup } from "./delivery/wakeup.js"
import type { DisabledReason, WebhookRecord } from "./endpoints/webhook.js"

export interface WebhookTest {
  readonly event: EventEnvelope
  readonly delivery: Delivery
}

export interface RecoveryList {
  readonly recoveries: ReadonlyArray<Recovery>
  readonly total: number
  readonly has_more: boolean
}

const isDeliveryId = Schema.is(DeliveryId)

/** Why mzk switched a webhook off, as an inactive webhook's refusal says it. */
const DISABLED_BECAUSE: Record<DisabledReason, string> = {
  delivery_failures: "disabled after its deliveries failed",
  endpoint_gone: "disabled: its endpoint answered 410 Gone"
}
const isRecoveryId = Schema.is(RecoveryId)

/**
 * Sending again what a webhook missed, by hand: a test event, a retry of one delivery, and the
 * recovery of everything that failed since a time. Each queues `manual` deliveries (one attempt,
 * no retry schedule, never disabling the webhook), signed afresh by the delivery engine like any
 * attempt, and each refuses an inactive webhook (409), which receives nothing until re-enabled.
 * Unknown, malformed and other accounts' or other webhooks' ids are all 404.
 */
export class WebhookReplay extends Context.Tag("@mzk/core/WebhookReplay")<WebhookReplay, {
  /** A `webhook.test` event to this webhook only, whatever it subscribes to. */
  readonly test: (accountId: AccountId, webhookId: string) => Effect.Effect<WebhookTest, WebhookNotFound | WebhookInactive | StorageError>
  readonly getDelivery: (
    accountId: AccountId,
    webhookId: string,
    deliveryId: string
  ) => Effect.Effect<Delivery, WebhookNotFound | DeliveryNotFound | StorageError>
  /** One more attempt of a settled delivery, now: the same event (and id), signed afresh. */
  readonly retryDelivery: (
    accountId: AccountId,
    webhookId: string,
    deliveryId: string
  ) => Effect.Effect<Delivery, WebhookNotFound | DeliveryNotFound | DeliveryPending | WebhookInactive | StorageError>
  /** Starts a recovery of the webhook's failed deliveries since `since`, run in the background. */
  readonly recover: (
    accountId: AccountId,
    webhookId: string,
    input: RecoverWebhookInput
  ) => Effect.Effect<Recovery, WebhookNotFound | WebhookInactive | InvalidRequest | StorageError>
  readonly getRecovery: (
    accountId: AccountId,
    webhookId: string,
    recoveryId: string
  ) => Effect.Effect<Recovery, WebhookNotFound | RecoveryNotFound | StorageError>
  /** The webhook's recoveries, newest first. */
  readonly listRecoveries: (accountId: AccountId, webhookId: string, query?: PageQuery) => Effect.Effect<RecoveryList, WebhookNotFound | InvalidRequest | StorageError>
}>() {
  static readonly layer = Layer.effect(
    this,
    Effect.gen(function*() {
      const tx = yield* Transactor
      const webhooks = yield* WebhooksRepo
      const deliveries = yield* DeliveriesRepo
      const recoveries = yield* RecoveriesRepo
      const eventsRepo = yield* EventsRepo
      const events = yield* Events
      const wakeup = yield* Effect.serviceOption(DeliveryWakeup)
      const recovery = yield* makeRecoveryStarter
      const deliveryQueue = yield* makeDeliveryQueue

      const find = (accountId: AccountId, id: string) => findWebhook(webhooks, accountId, id)

      const active = (webhook: WebhookRecord) =>
        webhook.active
          ? Effect.succeed(webhook)
          : Effect.fail(new WebhookInactive({
            message: `Webhook ${webhook.id} is inactive${webhook.disabled_reason === null ? "" : ` (${DISABLED_BECAUSE[webhook.disabled_reason]})`}: ` +
              "re-enable it with PATCH {\"active\": true} first"
          }))

      const deliveryNotFound = (id: string) => new DeliveryNotFound({ message: `No delivery ${JSON.stringify(id)} of this webhook` })

      /** The delivery of this webhook, with its event's type. */
      const findDelivery = (webhook: WebhookRecord, id: string) =>
        Effect.gen(function*() {
          const found = isDeliveryId(id) ? yield* deliveries.get(webhook.account_id, id) : Option.none<DeliveryRecord>()
          if (Option.isNone(found) || found.value.webhook_id !== webhook.id) return yield* deliveryNotFound(id)
          return { record: found.value, type: yield* eventType(found.value) }
        })

      const eventType = (delivery: DeliveryRecord) =>
        Effect.flatMap(eventsRepo.get(delivery.event_id), Option.match({
          // A delivery is deleted with its event; one without is not there to show.
          onNone: () => Effect.fail(deliveryNotFound(delivery.id)),
          onSome: (event) => Effect.succeed<EventType>(event.type)
        }))

      const test = (accountId: AccountId, webhookId: string) =>
        Effect.gen(function*() {
          const webhook = yield* Effect.flatMap(find(accountId, webhookId), active)
          // The event and its one manual delivery commit together; no other webhook gets it, since
          // no webhook subscribes to `webhook.test` and the fan-out passes it by.
          const { event, delivery } = yield* tx.transaction(Effect.gen(function*() {
            const event = yield* events.record(webhook.account_id, "webhook.test", {
              webhook_id: webhook.id,
              message: `A test event for webhook ${webhook.id}`,
              metadata: webhook.metadata
            })
            return { event, delivery: yield* deliveryQueue.queueOne(event, webhook, "manual") }
          }))
          return { event: toEnvelope(event), delivery: toDelivery(delivery, event.type) }
        })

      const getDelivery = (accountId: AccountId, webhookId: string, deliveryId: string) =>
        Effect.flatMap(find(accountId, webhookId), (webhook) =>
          Effect.map(findDelivery(webhook, deliveryId), ({ record, type }) => toDelivery(record, type)))

      const retryDelivery = (accountId: AccountId, webhookId: string, deliveryId: string) =>
        Effect.gen(function*() {
          const webhook = yield* find(accountId, webhookId)
          const { record, type } = yield* findDelivery(webhook, deliveryId)
          yield* active(webhook)
          const queued = yield* deliveries.requeue(record.id, yield* now)
          if (Option.isNone(queued)) {
            return yield* new DeliveryPending({
              message: `Delivery ${record.id} is already waiting for an attempt` +
                (record.next_attempt_at === null ? "" : ` (due ${record.next_attempt_at})`)
            })
          }
          if (Option.isSome(wakeup)) yield* tx.afterCommit(wakeup.value.notify)
          return toDelivery(queued.value, type)
        })

      const recover = (accountId: AccountId, webhookId: string, input: RecoverWebhookInput) =>
        Effect.gen(function*() {
          const webhook = yield* find(accountId, webhookId)
          yield* recovery.checkSince(input.since, "since")
          yield* active(webhook)
          return toRecovery(yield* tx.transaction(recovery.start(webhook, input.since)))
        })

      const getRecovery = (accountId: AccountId, webhookId: string, recoveryId: string) =>
        Effect.gen(function*() {
          const webhook = yield* find(accountId, webhookId)
          const found = isRecoveryId(recoveryId) ? yield* recoveries.get(accountId, webhook.id, recoveryId) : Option.none()
          if (Option.isNone(found)) {
            return yield* new RecoveryNotFound({ message: `No recovery ${JSON.stringify(recoveryId)} of this webhook` })
          }
          return toRecovery(found.value)
        })

      const listRecoveries = (accountId: AccountId, webhookId: string, query: PageQuery = {}) =>
        Effect.gen(function*() {
          const webhook = yield* find(accountId, webhookId)
          const found = yield* recoveries.list(accountId, webhook.id, yield* pageOf(query))
          return { recoveries: found.items.map(toRecovery), total: found.total, has_more: found.has_more }
        })

      return { test, getDelivery, retryDelivery, recover, getRecovery, listRecoveries }
    })
  )
}
