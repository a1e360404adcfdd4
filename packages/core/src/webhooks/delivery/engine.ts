import { Cause, Clock, Context, Effect, FiberSet, Layer, Option } from "effect"
import { toEnvelope } from "../../events/event.js"
import { EventsRepo } from "../../events/repo.js"
import { type AccountId, Ids, type WebhookId } from "../../kernel/ids.js"
import { logFailure } from "../../kernel/storageFailure.js"
import { millisFromTimestamp, type Timestamp, timestampFromMillis } from "../../kernel/time.js"
import { Telemetry } from "../../kernel/telemetry.js"
import { Transactor } from "../../kernel/transaction.js"
import { AuditLog } from "../../audit/service.js"
import { checkWebhookUrl } from "../endpoints/addresses.js"
import { auditWebhook } from "../endpoints/audit.js"
import { WebhookConfig } from "../endpoints/config.js"
import type { DeliveryAttemptRecord, DeliveryErrorClass, DeliveryRecord } from "./delivery.js"
import { nextDeliveryState } from "./deliveryState.js"
import { WebhooksRepo } from "../endpoints/repo.js"
import { DeliveriesRepo } from "./repo.js"
import { TransportFailure, WebhookTransport } from "./transport.js"
import type { WebhookRecord } from "../endpoints/webhook.js"
import { signatureHeaders, signingSecrets } from "../endpoints/signing.js"
import { RESPONSE_BODY_LIMIT_BYTES, truncateUtf8 } from "./text.js"
import { DeliveryWakeup } from "./wakeup.js"
import { observeAttempt } from "./observe.js"

type SendResult =
  | { readonly status: number; readonly body: string; readonly retryAfter?: string | undefined; readonly error?: undefined }
  | { readonly error: DeliveryErrorClass; readonly status?: undefined; readonly retryAfter?: undefined }

/**
 * When nothing can be claimed although storage says something is due (a lease taken over in
 * between, clocks of two processes apart), wait at least this long rather than spin.
 */
const MIN_IDLE_WAIT_MS = 10

/** A backlogged delivery starts only with this much of its lease left beyond the attempt timeout. */
const LEASE_MARGIN_MS = 5_000

/**
 * The delivery engine: a background loop that claims due deliveries, sends each attempt through
 * `WebhookTransport` and records it. Claims are leases in storage, so any number of engines, in any
 * number of processes, can share one database without sending an attempt twice while a lease holds.
 *
 * Concurrency is bounded three times: over all endpoints, per account, and per webhook. A webhook
 * whose slots and small backlog are full, and an account holding its share
 * (`maxConcurrentPerAccount`), are left out of claims, so deliveries to slow endpoints wait in
 * storage, not in a slot another endpoint could use; claims take due deliveries in turns across
 * accounts, the account holding fewest first, so one account's backlog never holds another's
 * first delivery back (each engine shares its own slots this way; claims of engines in other
 * processes are kept apart by storage). Every attempt is signed with the time it is made, and
 * retries are due at fixed offsets from the first failure (`retryScheduleMs`), later where a 429
 * or 503 asks with `Retry-After` (`nextDeliveryState` decides); when the last one fails, or the
 * endpoint answers 410 Gone, the delivery is `failed`, the webhook is switched off with its
 * `disabled_reason` and its other pending deliveries are cancelled, in one transaction.
 */
export class DeliveryEngine extends Context.Tag("@mzk/core/DeliveryEngine")<DeliveryEngine, {
  /** Attempts in flight in this process. */
  readonly inFlight: Effect.Effect<number>
}>() {
  /** Runs the engine for the lifetime of the layer's scope; closing it interrupts attempts in flight. */
  static readonly layer = Layer.scoped(
    this,
    Effect.gen(function*() {
      const config = yield* WebhookConfig
      if (config.leaseMs <= config.timeoutMs) {
        // An attempt could outlive its lease, and another engine would send it a second time.
        return yield* Effect.dieMessage("WebhookConfig.leaseMs must be longer than timeoutMs")
      }
      const deliveries = yield* DeliveriesRepo
      const webhooks = yield* WebhooksRepo
      const events = yield* EventsRepo
      const audit = yield* AuditLog
      const tx = yield* Transactor
      const transport = yield* WebhookTransport
      const wakeup = yield* DeliveryWakeup
      const ids = yield* Ids
      const telemetry = yield* Telemetry
      const fibers = yield* FiberSet.make<void, never>()

      const perWebhook = new Map<WebhookId, number>()
      /**
       * Claimed deliveries waiting for a slot of their webhook, at most `maxConcurrentPerWebhook`
       * each: a claim returns up to that many per webhook, and handing back what does not fit at
       * once would cost a write each. Only the loop fiber touches these maps.
       */
      const backlog = new Map<WebhookId, Array<DeliveryRecord>>()
      /** Per account: attempts in flight plus deliveries waiting in `backlog`, what its share counts. */
      const perAccount = new Map<AccountId, number>()
      const hold = (account: AccountId, n: number) => {
        const left = (perAccount.get(account) ?? 0) + n
        if (left <= 0) perAccount.delete(account)
        else perAccount.set(account, left)
      }
      const accountsAtCap = () => [...perAccount].filter(([, n]) => n >= config.maxConcurrentPerAccount).map(([id]) => id)
      let inFlight = 0
      const busy = (id: WebhookId) => perWebhook.get(id) ?? 0
      const waiting = (id: WebhookId) => backlog.get(id)?.length ?? 0
      /**
       * Webhooks left out of claims: those that could not take a whole claim's share (up to
       * `maxConcurrentPerWebhook`) into their slots and backlog. A busy webhook is then claimed for
       * once per that many attempts, not once per attempt, and nothing claimed has to be handed back.
       */
      const saturated = () =>
        [...perWebhook.keys(), ...backlog.keys()].filter((id, i, all) =>
          all.indexOf(id) === i && busy(id) + waiting(id) > config.maxConcurrentPerWebhook
        )

      // The check is pure and the same URLs come back on every attempt: keep recent answers.
      const urlChecks = new Map<string, ReturnType<typeof checkWebhookUrl>>()
      const checkUrl = (url: string) => {
        let checked = urlChecks.get(url)
        if (checked === undefined) {
          if (urlChecks.size >= 1_000) urlChecks.clear()
          checked = checkWebhookUrl(url, config.allowInsecureWebhooks)
          urlChecks.set(url, checked)
        }
        return checked
      }

      const send = (webhook: WebhookRecord, eventId: string, body: string): Effect.Effect<SendResult> => {
        // Checked again on every attempt: the URL may predate a tightened policy, and a record
        // written past the service must still never reach an internal address.
        const checked = checkUrl(webhook.url)
        if (!checked.ok) {
          return Effect.succeed({ error: checked.problem.kind === "invalid" ? "invalid_url" : "blocked_address" })
        }
        return Effect.gen(function*() {
          // Signed with the time of this attempt, so a receiver's 300 s tolerance holds on retries,
          // and with every secret live then, so a rotation's overlap ends on time.
          const nowMs = yield* Clock.currentTimeMillis
          const headers = {
            "Content-Type": "application/json",
            "User-Agent": config.userAgent,
            ...signatureHeaders(signingSecrets(webhook, nowMs), { id: eventId, timestamp: Math.floor(nowMs / 1000), body })
          }
          return yield* transport.send({ url: webhook.url, headers, body, timeoutMs: config.timeoutMs, webhookId: webhook.id }).pipe(
            // The transport has its own timer; this one holds even for a transport that ignores it.
            Effect.timeoutFail({
              duration: config.timeoutMs,
              onTimeout: () => new TransportFailure({ reason: "timeout", message: "No answer within the timeout" })
            }),
            Effect.map((response): SendResult => ({ status: response.status, body: response.body, retryAfter: response.retryAfter })),
            Effect.catchTag("TransportFailure", (failure) => Effect.succeed<SendResult>({ error: failure.reason }))
          )
        })
      }

      const attempt = (delivery: DeliveryRecord) =>
        Effect.gen(function*() {
          const lease = delivery.lease_expires_at as Timestamp
          const startMs = yield* Clock.currentTimeMillis
          const startedAt = timestampFromMillis(startMs)
          const webhook = yield* webhooks.get(delivery.account_id, delivery.webhook_id)
          if (Option.isNone(webhook) || !webhook.value.active) {
            yield* deliveries.cancel(delivery.id, lease, startedAt)
            return
          }
          const event = yield* events.get(delivery.event_id)
          if (Option.isNone(event)) {
            yield* Effect.logWarning("Webhook delivery cancelled: its event no longer exists").pipe(
              Effect.annotateLogs({ delivery_id: delivery.id, event_id: delivery.event_id })
            )
            yield* deliveries.cancel(delivery.id, lease, startedAt)
            return
          }
          const id = yield* ids.make("attempt")
          const result = yield* send(webhook.value, event.value.id, JSON.stringify(toEnvelope(event.value)))
          const endMs = yield* Clock.currentTimeMillis
          const number = delivery.attempts + 1
          const answer = { status: result.status ?? null, retryAfter: result.retryAfter }
          const after = nextDeliveryState(delivery, number, answer, endMs, config.retryScheduleMs)
          const record: DeliveryAttemptRecord = {
            id,
            account_id: delivery.account_id,
            delivery_id: delivery.id,
            webhook_id: delivery.webhook_id,
            event_id: delivery.event_id,
            event_type: event.value.type,
            attempt: number,
            trigger: delivery.trigger,
            attempted_at: startedAt,
            outcome: after.status === "succeeded" ? "succeeded" : "failed",
            status_code: result.status ?? null,
            error: result.error ?? null,
            latency_ms: Math.max(0, Math.round(endMs - startMs)),
            response_body: result.status === undefined ? null : truncateUtf8(result.body, RESPONSE_BODY_LIMIT_BYTES)
          }
          const endedAt = timestampFromMillis(endMs)
          if (after.disabled_reason === undefined) {
            // One conditional write, atomic on its own: no transaction on the common path.
            if (yield* deliveries.recordAttempt(record, after, lease)) yield* observeAttempt(telemetry, record, after)
            return
          }
          // The last retry failed, or the endpoint is gone: the webhook goes off with the delivery.
          const reason = after.disabled_reason ?? "delivery_failures"
          const disabled = yield* tx.transaction(Effect.gen(function*() {
            if (!(yield* deliveries.recordAttempt(record, after, lease))) return false
            yield* tx.afterCommit(observeAttempt(telemetry, record, after))
            const switchedOff = yield* webhooks.update(delivery.account_id, delivery.webhook_id, { active: false, disabled_reason: reason }, endedAt)
            if (Option.isSome(switchedOff)) yield* auditWebhook(audit, "webhook.disabled", webhook.value, switchedOff.value)
            yield* deliveries.cancelPendingForWebhook(delivery.webhook_id, endedAt)
            return true
          }))
          if (disabled) {
            yield* Effect.logWarning(
              reason === "endpoint_gone"
                ? "Webhook disabled: its endpoint answered 410 Gone"
                : "Webhook disabled after its delivery retries were exhausted"
            ).pipe(Effect.annotateLogs({ webhook_id: delivery.webhook_id, event_id: delivery.event_id, disabled_reason: reason }))
          }
        })

      const start = (delivery: DeliveryRecord) =>
        Effect.suspend(() => {
          inFlight++
          perWebhook.set(delivery.webhook_id, (perWebhook.get(delivery.webhook_id) ?? 0) + 1)
          const done = Effect.sync(() => {
            inFlight--
            hold(delivery.account_id, -1)
            const left = (perWebhook.get(delivery.webhook_id) ?? 1) - 1
            if (left <= 0) perWebhook.delete(delivery.webhook_id)
            else perWebhook.set(delivery.webhook_id, left)
          }).pipe(Effect.zipRight(wakeup.notify))
          return FiberSet.run(
            fibers,
            attempt(delivery).pipe(
              // Stopping mid-request hands the delivery back for any engine to send at once (the
              // receiver may see it twice, which event ids let it spot), not after the lease.
              Effect.onInterrupt(() => deliveries.release(delivery.id, delivery.lease_expires_at as Timestamp).pipe(Effect.ignore)),
              // A failed write leaves the lease to run out; the delivery is then taken up again.
              Effect.catchAllCause((cause) =>
                Cause.isInterruptedOnly(cause)
                  ? Effect.void
                  : logFailure("Webhook attempt could not be completed", cause).pipe(
                    Effect.annotateLogs({ delivery_id: delivery.id })
                  )
              ),
              Effect.ensuring(done)
            )
          )
        })

      /**
       * Starts backlogged deliveries whose webhook has a free slot. One whose lease would run out
       * before an attempt could finish is handed back instead: another engine may take it over
       * then, and sending it anyway could deliver it twice.
       */
      const startBacklog = Effect.gen(function*() {
        const nowMs = yield* Clock.currentTimeMillis
        for (const [webhookId, queue] of backlog) {
          while (queue.length > 0 && busy(webhookId) < config.maxConcurrentPerWebhook && inFlight < config.maxConcurrentDeliveries) {
            const delivery = queue.shift()!
            const lease = delivery.lease_expires_at as Timestamp
            if (millisFromTimestamp(lease) - nowMs < config.timeoutMs + LEASE_MARGIN_MS) {
              hold(delivery.account_id, -1)
              yield* deliveries.release(delivery.id, lease)
            } else yield* start(delivery)
          }
          if (queue.length === 0) backlog.delete(webhookId)
        }
      })

      /** Claims what there is room for and starts it; says whether another claim may find more. */
      const round = Effect.gen(function*() {
        yield* startBacklog
        const free = config.maxConcurrentDeliveries - inFlight
        if (free <= 0) return "full" as const
        const nowMs = yield* Clock.currentTimeMillis
        const limit = Math.min(free, config.claimBatchSize)
        const claimed = yield* deliveries.claimDue({
          now: timestampFromMillis(nowMs),
          limit,
          maxPerWebhook: config.maxConcurrentPerWebhook,
          leaseUntil: timestampFromMillis(nowMs + config.leaseMs),
          excludeWebhooks: saturated(),
          maxPerAccount: config.maxConcurrentPerAccount,
          heldByAccount: new Map(perAccount)
        })
        for (const delivery of claimed) {
          const webhookId = delivery.webhook_id
          hold(delivery.account_id, 1)
          if (busy(webhookId) < config.maxConcurrentPerWebhook) {
            yield* start(delivery)
          } else if (waiting(webhookId) < config.maxConcurrentPerWebhook) {
            const queue = backlog.get(webhookId) ?? []
            queue.push(delivery)
            backlog.set(webhookId, queue)
          } else {
            hold(delivery.account_id, -1)
            yield* deliveries.release(delivery.id, delivery.lease_expires_at as Timestamp)
          }
        }
        return claimed.length === limit ? "more" as const : claimed.length === 0 ? "none" as const : "some" as const
      })

      // On shutdown, backlogged deliveries go back at once rather than when their leases run out.
      yield* Effect.addFinalizer(() =>
        Effect.forEach([...backlog.values()].flat(), (d) => deliveries.release(d.id, d.lease_expires_at as Timestamp), {
          discard: true
        }).pipe(Effect.ignore)
      )

      const sleepUntilDue = (claimedNothing: boolean) =>
        Effect.gen(function*() {
          const next = yield* deliveries.nextDueAt(saturated(), accountsAtCap())
          const nowMs = yield* Clock.currentTimeMillis
          let waitMs = config.pollIntervalMs
          if (Option.isSome(next)) {
            const untilDue = millisFromTimestamp(next.value) - nowMs
            waitMs = Math.min(waitMs, Math.max(untilDue, claimedNothing ? MIN_IDLE_WAIT_MS : 0))
          }
          if (waitMs > 0) yield* Effect.raceFirst(wakeup.take, Effect.sleep(waitMs))
        })

      const step = Effect.gen(function*() {
        yield* wakeup.clear
        const state = yield* round
        if (state === "more") return
        if (state === "full") return yield* wakeup.take
        yield* sleepUntilDue(state === "none")
      }).pipe(
        Effect.catchAllCause((cause) =>
          Cause.isInterruptedOnly(cause)
            ? Effect.failCause(cause)
            : logFailure("Webhook delivery engine: storage unavailable, retrying", cause).pipe(
              Effect.zipRight(Effect.raceFirst(wakeup.take, Effect.sleep(config.pollIntervalMs)))
            )
        )
      )

      yield* Effect.forkScoped(Effect.forever(step))
      return { inFlight: Effect.sync(() => inFlight) }
    })
  )
}
