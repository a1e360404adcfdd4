import { Accounts, actingFor, ApiKeys, Proofs, Webhooks } from "@mzk/core"
import { Clock, Effect, TestClock, TestContext } from "effect"
import { ScriptedWebhooks, testService } from "./testService.js"

/** An endpoint that answers every delivery with a 500. */
export const FAILING_ENDPOINT = "https://receiver.example.com/mzk"

export interface RetryScheduleAttempt {
  /** 1 for the first attempt, 2 to 6 for the retries. */
  readonly attempt: number
  /** Ms after the first attempt, on the simulated clock. */
  readonly afterMs: number
  readonly statusCode: number | null
  readonly eventType: string
}

export interface RetryScheduleResult {
  readonly attempts: ReadonlyArray<RetryScheduleAttempt>
  /** The webhook after the last retry failed: `active: false`, `disabled_reason: "delivery_failures"`. */
  readonly webhook: { readonly active: boolean; readonly disabled_reason: string | null }
  /** Real time the whole run took, layers and all. */
  readonly elapsedMs: number
}

const MINUTE = 60_000
const HOUR = 60 * MINUTE

/**
 * A failing webhook walked through the whole retry schedule on the simulated clock: an account, a
 * key, a webhook for `proof.completed` whose endpoint always answers 500, a proof; its event is
 * tried at once, then 30 s, 5 min, 30 min, 2 h and 8 h after that first failure, and the webhook
 * is disabled. Eight simulated hours in well under a second of real time.
 */
export const retryScheduleExample = Effect.gen(function*() {
  const account = yield* Effect.flatMap(Accounts, (accounts) => accounts.create({ name: "Acme" }))
  const key = yield* Effect.flatMap(ApiKeys, (keys) => keys.create(account.id, { name: "ci" }))
  const principal = yield* Effect.flatMap(ApiKeys, (keys) => keys.authenticate(key.secret))
  const webhooks = yield* Webhooks
  const { webhook } = yield* webhooks.create(account.id, { url: FAILING_ENDPOINT, events: ["proof.completed"] })

  yield* Effect.flatMap(Proofs, (proofs) => proofs.create(principal.account_id, { type: "multiplier", inputs: { a: 3, b: 11 } }).pipe(actingFor(principal)))
  // The fake prover takes 100 ms of the simulated clock; the event's first attempt follows at once.
  yield* TestClock.adjust("1 second")
  for (const step of [30_000, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 8 * HOUR, 24 * HOUR]) {
    yield* TestClock.adjust(step)
  }

  const sent = yield* Effect.flatMap(ScriptedWebhooks, (scripted) => scripted.requestsTo(FAILING_ENDPOINT))
  const log = yield* webhooks.listDeliveryAttempts(account.id, webhook.id, { limit: 100 })
  const first = sent[0]?.at_ms ?? (yield* Clock.currentTimeMillis)
  // The log lists newest first, as every list does; the walk reads it in the order it happened.
  const attempts = [...log.attempts].reverse().map((attempt, i): RetryScheduleAttempt => ({
    attempt: attempt.attempt,
    afterMs: (sent[i]?.at_ms ?? Number.NaN) - first,
    statusCode: attempt.status_code,
    eventType: attempt.event_type
  }))
  const after = yield* webhooks.get(account.id, webhook.id)
  return { attempts, webhook: { active: after.active, disabled_reason: after.disabled_reason } }
})

/**
 * `retryScheduleExample` as a Promise, for plain Node: runs it over `testService` with a test clock
 * and reports the real time it took.
 */
export const runRetryScheduleExample = async (): Promise<RetryScheduleResult> => {
  const started = performance.now()
  const result = await Effect.runPromise(
    retryScheduleExample.pipe(
      Effect.provide(testService({ webhooks: { [FAILING_ENDPOINT]: [{ status: 500, body: "nope" }] } })),
      Effect.provide(TestContext.TestContext)
    )
  )
  return { ...result, elapsedMs: performance.now() - started }
}
