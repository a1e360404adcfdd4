import { describe, expect, it } from "@effect/vitest"
import {
  type AccountId,
  Accounts,
  ApiKeys,
  DeliveriesRepo,
  type EventEnvelope,
  Events,
  timestampFromMillis,
  Transactor,
  UpdateWebhookInput,
  decodeInput,
  DEFAULT_RECOVERY_CONFIG,
  RecoveryConfig,
  WebhookRecoveries,
  WebhookReplay,
  Webhooks
} from "@mzk/core"
import { type RecordedRequest, ScriptedWebhooks, testService, type TestServiceOptions, verifyWebhookSignature } from "@mzk/testkit"
import { Clock, Effect, Layer, Redacted, TestClock } from "effect"

const SECOND = 1_000
const MINUTE = 60 * SECOND
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR
/** The schedule's last retry comes 8 h after the first failure: past it, a failing delivery is settled. */
const SCHEDULE_SPENT = 8 * HOUR + MINUTE

const FAILING = "https://failing.example.com/hook"
const OK = "https://ok.example.com/hook"

/** An endpoint that fails until `fix` is called, then answers 200. */
const repairable = () => {
  let fixed = false
  return { script: () => (fixed ? { status: 200 } : { status: 500, body: "down" }), fix: () => void (fixed = true), breakAgain: () => void (fixed = false) }
}

const run = <A, E, R>(body: Effect.Effect<A, E, R>, options: TestServiceOptions = {}) =>
  Effect.provide(body, testService(options)) as Effect.Effect<A, E, never>

const newAccount = Effect.map(Effect.flatMap(Accounts, (a) => a.create({ name: "Acme" })), (a) => a.id)
const keyCreated = (account: AccountId, name = "k") => Effect.flatMap(ApiKeys, (keys) => keys.create(account, { name }))
const nowIso = Effect.map(Clock.currentTimeMillis, timestampFromMillis)
const envelope = (request: RecordedRequest) => JSON.parse(request.body) as EventEnvelope
/** The attempt log oldest first, as these tests read it (the API lists it newest first). */
const attemptsOf = (account: AccountId, webhookId: string) =>
  Effect.map(Effect.flatMap(Webhooks, (w) => w.listDeliveryAttempts(account, webhookId, { limit: 100 })), (log) => [...log.attempts].reverse())
const requestsTo = (url: string) => Effect.flatMap(ScriptedWebhooks, (scripted) => scripted.requestsTo(url))
const decodeUpdate = decodeInput(UpdateWebhookInput)

/**
 * A webhook of `account` that got `events` events 10 minutes apart (keys created and revoked in
 * turn, so the account stays under its key limit), all failed: the first through its whole
 * schedule, which disabled the webhook and cancelled the others.
 */
const disabledWebhook = (account: AccountId, url: string, events: number) =>
  Effect.gen(function*() {
    const { webhook } = yield* (yield* Webhooks).create(account, { url, events: ["key.created", "key.revoked"] })
    const keys = yield* ApiKeys
    let last: string | undefined
    for (let i = 0; i < events; i++) {
      if (last === undefined) last = (yield* keys.create(account, { name: `k${i}` })).api_key.id
      else {
        yield* keys.revoke(account, last)
        last = undefined
      }
      yield* TestClock.adjust(10 * MINUTE)
    }
    yield* TestClock.adjust(SCHEDULE_SPENT)
    const disabled = yield* (yield* Webhooks).get(account, webhook.id)
    expect([disabled.active, disabled.disabled_reason]).toEqual([false, "delivery_failures"])
    return webhook
  })

describe("webhook.test", () => {
  it.effect("goes to the webhook tested only, whatever it subscribes to, signed; one attempt, which never disables it", () => {
    const endpoint = repairable()
    return run(Effect.gen(function*() {
      const account = yield* newAccount
      const webhooks = yield* Webhooks
      const replay = yield* WebhookReplay
      const created = yield* webhooks.create(account, { url: FAILING, events: ["proof.completed"] })
      yield* webhooks.create(account, { url: OK, events: ["proof.completed", "key.created"] })

      const sent = yield* replay.test(account, created.webhook.id)
      expect(sent.event).toMatchObject({ type: "webhook.test", data: { webhook_id: created.webhook.id, message: expect.any(String) } })
      expect(sent.delivery).toMatchObject({
        webhook_id: created.webhook.id,
        event_id: sent.event.id,
        event_type: "webhook.test",
        status: "pending",
        trigger: "manual",
        attempts: 0
      })
      yield* TestClock.adjust(0)
      const [request, ...more] = yield* requestsTo(FAILING)
      expect(more).toEqual([])
      expect(envelope(request!)).toEqual(sent.event)
      expect(verifyWebhookSignature(request!.body, request!.headers["Service-Signature"], Redacted.value(created.secret), { now: request!.at_ms }))
        .toBeDefined()
      expect(yield* requestsTo(OK)).toEqual([])

      // It failed: no retry and the webhook stays on, however long one waits.
      yield* TestClock.adjust(DAY)
      expect(yield* requestsTo(FAILING)).toHaveLength(1)
      expect((yield* webhooks.get(account, created.webhook.id)).active).toBe(true)
      expect(yield* replay.getDelivery(account, created.webhook.id, sent.delivery.id)).toMatchObject({ status: "failed", attempts: 1, next_attempt_at: null })
      expect((yield* attemptsOf(account, created.webhook.id)).map((a) => [a.event_type, a.attempt, a.trigger, a.outcome]))
        .toEqual([["webhook.test", 1, "manual", "failed"]])
      // The event is in the account's events like any other.
      expect((yield* (yield* Events).list(account, { type: "webhook.test" })).events).toEqual([sent.event])
    }), { webhooks: { [FAILING]: endpoint.script } })
  })

  it.effect("an inactive webhook is refused (409), recording nothing; unknown and other accounts' webhooks are not found", () =>
    run(Effect.gen(function*() {
      const account = yield* newAccount
      const replay = yield* WebhookReplay
      const { webhook } = yield* (yield* Webhooks).create(account, { url: OK, events: ["key.created"], active: false })
      expect((yield* Effect.flip(replay.test(account, webhook.id)))._tag).toBe("WebhookInactive")
      expect((yield* (yield* Events).list(account)).total).toBe(0)
      const stranger = yield* newAccount
      for (const id of [webhook.id, "wh_nope", "nope"]) {
        expect((yield* Effect.flip(replay.test(stranger, id)))._tag).toBe("WebhookNotFound")
      }
    })))
})

describe("retry of one delivery", () => {
  it.effect("one manual attempt of the same event, signed afresh; a failure neither restarts the schedule nor disables the webhook", () => {
    const endpoint = repairable()
    return run(Effect.gen(function*() {
      const account = yield* newAccount
      const webhooks = yield* Webhooks
      const replay = yield* WebhookReplay
      const { webhook, secret } = yield* webhooks.create(account, { url: FAILING, events: ["key.created"] })
      yield* keyCreated(account)
      yield* TestClock.adjust(SCHEDULE_SPENT)
      const schedule = yield* requestsTo(FAILING)
      expect(schedule).toHaveLength(6)
      const deliveryId = (yield* attemptsOf(account, webhook.id))[0]!.delivery_id

      // Disabled by its failures: a retry waits for it to be switched on.
      expect((yield* Effect.flip(replay.retryDelivery(account, webhook.id, deliveryId)))._tag).toBe("WebhookInactive")
      yield* webhooks.update(account, webhook.id, { active: true })

      const queued = yield* replay.retryDelivery(account, webhook.id, deliveryId)
      expect(queued).toMatchObject({ id: deliveryId, status: "pending", trigger: "manual", attempts: 6, next_attempt_at: yield* nowIso })
      yield* TestClock.adjust(0)
      yield* TestClock.adjust(DAY)
      const afterFailure = yield* requestsTo(FAILING)
      expect(afterFailure).toHaveLength(7)
      expect(yield* replay.getDelivery(account, webhook.id, deliveryId)).toMatchObject({ status: "failed", attempts: 7, next_attempt_at: null })
      expect((yield* webhooks.get(account, webhook.id)).active).toBe(true)

      endpoint.fix()
      yield* replay.retryDelivery(account, webhook.id, deliveryId)
      yield* TestClock.adjust(0)
      const all = yield* requestsTo(FAILING)
      expect(all).toHaveLength(8)
      // The same event every time, each attempt signed with its own time.
      expect(new Set(all.map((r) => envelope(r).id)).size).toBe(1)
      const last = all.at(-1)!
      expect(verifyWebhookSignature(last.body, last.headers["Service-Signature"], Redacted.value(secret), { now: last.at_ms }))
        .toEqual({ timestamp: Math.floor(last.at_ms / 1000) })
      expect(last.headers["Service-Signature"]).not.toBe(schedule[0]!.headers["Service-Signature"])
      expect(yield* replay.getDelivery(account, webhook.id, deliveryId)).toMatchObject({ status: "succeeded", attempts: 8, trigger: "manual" })
      expect((yield* attemptsOf(account, webhook.id)).map((a) => [a.attempt, a.trigger, a.outcome])).toEqual([
        ...[1, 2, 3, 4, 5, 6].map((n) => [n, "scheduled", "failed"]),
        [7, "manual", "failed"],
        [8, "manual", "succeeded"]
      ])
      // A delivered one may be sent again too (a receiver that lost it).
      expect((yield* replay.retryDelivery(account, webhook.id, deliveryId)).status).toBe("pending")
    }), { webhooks: { [FAILING]: endpoint.script } })
  })

  it.effect("a manual attempt answered 410 Gone still disables the webhook: the receiver's own word", () =>
    run(Effect.gen(function*() {
      const account = yield* newAccount
      const replay = yield* WebhookReplay
      const { webhook } = yield* (yield* Webhooks).create(account, { url: FAILING, events: ["key.created"] })
      const sent = yield* replay.test(account, webhook.id)
      yield* TestClock.adjust(0)
      expect(yield* replay.getDelivery(account, webhook.id, sent.delivery.id)).toMatchObject({ status: "failed", attempts: 1 })
      const gone = yield* (yield* Webhooks).get(account, webhook.id)
      expect([gone.active, gone.disabled_reason]).toEqual([false, "endpoint_gone"])
      const refused = yield* Effect.flip(replay.test(account, webhook.id))
      expect(refused.message).toContain("410 Gone")
    }), { webhooks: { [FAILING]: [{ status: 410 }] } }))

  it.effect("a delivery waiting in its schedule is 409; other webhooks', other accounts' and unknown deliveries are not found", () =>
    run(Effect.gen(function*() {
      const account = yield* newAccount
      const webhooks = yield* Webhooks
      const replay = yield* WebhookReplay
      const { webhook } = yield* webhooks.create(account, { url: FAILING, events: ["key.created"] })
      const { webhook: sibling } = yield* webhooks.create(account, { url: OK, events: ["key.created"] })
      yield* keyCreated(account)
      yield* TestClock.adjust(SECOND)
      const [failedOnce] = yield* attemptsOf(account, webhook.id)
      const waiting = yield* Effect.flip(replay.retryDelivery(account, webhook.id, failedOnce!.delivery_id))
      expect(waiting._tag).toBe("DeliveryPending")
      expect(waiting.message).toContain("due ")
      // Its retry still comes when the schedule says.
      yield* TestClock.adjust(30 * SECOND)
      expect(yield* requestsTo(FAILING)).toHaveLength(2)

      const [delivered] = yield* attemptsOf(account, sibling.id)
      const stranger = yield* newAccount
      const refusals = [
        [account, webhook.id, delivered!.delivery_id, "DeliveryNotFound"],
        [account, webhook.id, "del_01jd0000000000000000000000", "DeliveryNotFound"],
        [account, webhook.id, "nope", "DeliveryNotFound"],
        [stranger, webhook.id, failedOnce!.delivery_id, "WebhookNotFound"],
        [account, "wh_01jd0000000000000000000000", failedOnce!.delivery_id, "WebhookNotFound"]
      ] as const
      for (const [who, webhookId, deliveryId, tag] of refusals) {
        expect((yield* Effect.flip(replay.retryDelivery(who, webhookId, deliveryId)))._tag).toBe(tag)
        expect((yield* Effect.flip(replay.getDelivery(who, webhookId, deliveryId)))._tag).toBe(tag)
      }
    }), { webhooks: { [FAILING]: [{ status: 500 }] } }))
})

describe("recovery", () => {
  it.effect("re-enabling with recover_since re-queues what failed since then, a batch at a time, each for one manual attempt", () => {
    const endpoint = repairable()
    return run(Effect.gen(function*() {
      const account = yield* newAccount
      const webhooks = yield* Webhooks
      const replay = yield* WebhookReplay
      const t0 = yield* nowIso
      // Five events 10 minutes apart: the first fails its whole schedule, the other four are cancelled with it.
      const webhook = yield* disabledWebhook(account, FAILING, 5)
      const log = yield* attemptsOf(account, webhook.id)
      const deliveries = [...new Set(log.map((a) => a.delivery_id))]
      expect(deliveries).toHaveLength(5)
      // An event while it is off makes no delivery, so there is nothing of it to recover.
      yield* keyCreated(account, "while-off")
      endpoint.fix()

      // From the second event on.
      const since = timestampFromMillis(Date.parse(t0) + 5 * MINUTE)
      const patched = yield* webhooks.update(account, webhook.id, yield* decodeUpdate({ active: true, recover_since: since }))
      expect([patched.active, patched.disabled_reason]).toEqual([true, null])
      const [started] = (yield* replay.listRecoveries(account, webhook.id)).recoveries
      expect(started).toMatchObject({ status: "running", since, requeued: 0, completed_at: null })
      expect(started!.until).toBe(yield* nowIso)
      yield* TestClock.adjust(0)

      const recovery = yield* replay.getRecovery(account, webhook.id, started!.id)
      expect(recovery).toMatchObject({ status: "completed", requeued: 4, completed_at: yield* nowIso })
      const recovered = (yield* attemptsOf(account, webhook.id)).slice(log.length)
      expect(recovered.map((a) => [a.delivery_id, a.trigger, a.outcome])).toEqual(deliveries.slice(1).map((id) => [id, "manual", "succeeded"]))
      // Cancelled ones got their first attempt now; the spent one is outside the window and stays failed.
      expect(yield* replay.getDelivery(account, webhook.id, deliveries[0]!)).toMatchObject({ status: "failed", attempts: 6 })

      // A second recovery from the start finds only that one.
      const second = yield* replay.recover(account, webhook.id, { since: t0 })
      yield* TestClock.adjust(0)
      expect(yield* replay.getRecovery(account, webhook.id, second.id)).toMatchObject({ status: "completed", requeued: 1 })
      expect(yield* replay.getDelivery(account, webhook.id, deliveries[0]!)).toMatchObject({ status: "succeeded", attempts: 7, trigger: "manual" })
      expect((yield* replay.listRecoveries(account, webhook.id)).recoveries.map((r) => r.id)).toEqual([second.id, started!.id])
    }), { webhooks: { [FAILING]: endpoint.script }, recoveryConfig: { batchSize: 2 } })
  })

  it.effect("recovered deliveries that fail again stay failed, once each: the webhook stays on", () => {
    const endpoint = repairable()
    return run(Effect.gen(function*() {
      const account = yield* newAccount
      const replay = yield* WebhookReplay
      const t0 = yield* nowIso
      const webhook = yield* disabledWebhook(account, FAILING, 3)
      yield* (yield* Webhooks).update(account, webhook.id, { active: true })
      const before = (yield* requestsTo(FAILING)).length
      const recovery = yield* replay.recover(account, webhook.id, { since: t0 })
      yield* TestClock.adjust(DAY)
      expect((yield* requestsTo(FAILING)).length).toBe(before + 3)
      expect(yield* replay.getRecovery(account, webhook.id, recovery.id)).toMatchObject({ status: "completed", requeued: 3 })
      const webhookNow = yield* (yield* Webhooks).get(account, webhook.id)
      expect([webhookNow.active, webhookNow.disabled_reason]).toEqual([true, null])
    }), { webhooks: { [FAILING]: endpoint.script } })
  })

  it.effect("since must lie within the event retention window and not ahead; the webhook must be on; recover_since goes with active: true", () =>
    run(Effect.gen(function*() {
      const account = yield* newAccount
      const webhooks = yield* Webhooks
      const replay = yield* WebhookReplay
      const { webhook } = yield* webhooks.create(account, { url: OK, events: ["key.created"] })
      const now = Date.parse(yield* nowIso)
      const at = timestampFromMillis
      const detailOf = (error: { readonly _tag: string; readonly details?: ReadonlyArray<{ readonly path: string }> }) =>
        [error._tag, error.details?.map((d) => d.path)]
      expect(detailOf(yield* Effect.flip(replay.recover(account, webhook.id, { since: at(now - 2 * HOUR) })))).toEqual(["InvalidRequest", ["since"]])
      expect(detailOf(yield* Effect.flip(replay.recover(account, webhook.id, { since: at(now + SECOND) })))).toEqual(["InvalidRequest", ["since"]])
      expect((yield* replay.recover(account, webhook.id, { since: at(now - HOUR) })).status).toBe("running")

      for (const body of [{ recover_since: at(now) }, { active: false, recover_since: at(now) }, { active: true, recover_since: at(now - 2 * HOUR) }]) {
        expect(detailOf(yield* Effect.flip(webhooks.update(account, webhook.id, yield* decodeUpdate(body))))).toEqual(["InvalidRequest", ["recover_since"]])
      }
      yield* webhooks.update(account, webhook.id, { active: false })
      expect((yield* Effect.flip(replay.recover(account, webhook.id, { since: at(now) })))._tag).toBe("WebhookInactive")
      expect((yield* replay.listRecoveries(account, webhook.id)).total).toBe(1)
      const stranger = yield* newAccount
      expect((yield* Effect.flip(replay.recover(stranger, webhook.id, { since: at(now) })))._tag).toBe("WebhookNotFound")
      expect((yield* Effect.flip(replay.listRecoveries(stranger, webhook.id)))._tag).toBe("WebhookNotFound")
      const [mine] = (yield* replay.listRecoveries(account, webhook.id)).recoveries
      expect((yield* Effect.flip(replay.getRecovery(stranger, webhook.id, mine!.id)))._tag).toBe("WebhookNotFound")
      for (const id of ["rcv_01jd0000000000000000000000", "nope"]) {
        expect((yield* Effect.flip(replay.getRecovery(account, webhook.id, id)))._tag).toBe("RecoveryNotFound")
      }
    }), { eventsConfig: { retentionMs: HOUR } }))

  it.effect("a recovery of a webhook switched off before it ran is cancelled, re-queuing nothing", () =>
    run(Effect.gen(function*() {
      const account = yield* newAccount
      const webhooks = yield* Webhooks
      const replay = yield* WebhookReplay
      const t0 = yield* nowIso
      const webhook = yield* disabledWebhook(account, FAILING, 2)
      const reenable = yield* decodeUpdate({ active: true, recover_since: t0 })
      // In one transaction, so the recovery loop cannot run between the two.
      yield* (yield* Transactor).transaction(Effect.zipRight(
        webhooks.update(account, webhook.id, reenable),
        webhooks.update(account, webhook.id, { active: false })
      ))
      const before = (yield* requestsTo(FAILING)).length
      yield* TestClock.adjust(HOUR)
      const [recovery] = (yield* replay.listRecoveries(account, webhook.id)).recoveries
      expect(recovery).toMatchObject({ status: "cancelled", requeued: 0 })
      expect((yield* requestsTo(FAILING)).length).toBe(before)
    }), { webhooks: { [FAILING]: [{ status: 500 }] } }))

  it.effect("two recovery loops on one store share the batches: every delivery re-queued and sent exactly once", () => {
    const endpoint = repairable()
    return run(Effect.gen(function*() {
      const account = yield* newAccount
      const replay = yield* WebhookReplay
      const t0 = yield* nowIso
      const webhook = yield* disabledWebhook(account, FAILING, 12)
      endpoint.fix()
      yield* (yield* Webhooks).update(account, webhook.id, { active: true })
      const before = (yield* requestsTo(FAILING)).length
      yield* Effect.scoped(Effect.gen(function*() {
        // A second loop, as another process would run it: woken by its polls only, every second.
        yield* Layer.build(WebhookRecoveries.layer.pipe(
          Layer.provide(Layer.succeed(RecoveryConfig, { ...DEFAULT_RECOVERY_CONFIG, batchSize: 1, pollIntervalMs: SECOND }))
        ))
        const recovery = yield* replay.recover(account, webhook.id, { since: t0 })
        yield* TestClock.adjust(MINUTE)
        expect(yield* replay.getRecovery(account, webhook.id, recovery.id)).toMatchObject({ status: "completed", requeued: 12 })
      }))
      const sent = (yield* requestsTo(FAILING)).slice(before).map((r) => envelope(r).id)
      expect(sent).toHaveLength(12)
      expect(new Set(sent).size).toBe(12)
      const stored = yield* Effect.forEach(sent, (eventId) => Effect.flatMap(DeliveriesRepo, (repo) => repo.listByEvent(eventId as never)))
      expect(stored.flat().map((d) => [d.status, d.trigger])).toEqual(sent.map(() => ["succeeded", "manual"]))
    }), { webhooks: { [FAILING]: endpoint.script }, recoveryConfig: { batchSize: 1 } })
  })
})
