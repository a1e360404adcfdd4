import {
  AuditConfig,
  CircuitsConfig,
  type CircuitsConfigShape,
  DEFAULT_AUDIT_CONFIG,
  DEFAULT_CIRCUITS_CONFIG,
  DEFAULT_PROOFS_CONFIG,
  CoreLoops,
  DEFAULT_EVENTS_CONFIG,
  DEFAULT_IDEMPOTENCY_CONFIG,
  DEFAULT_RECOVERY_CONFIG,
  DEFAULT_WEBHOOK_CONFIG,
  EventsConfig,
  type EventsConfigShape,
  IdempotencyConfig,
  ProofsConfig,
  type ProofsConfigShape,
  RecoveryConfig,
  type RecoveryConfigShape,
  type Storage,
  WebhookConfig,
  type WebhookConfigShape
} from "@mzk/core"
import { Context, Effect, Layer, TestClock } from "effect"
import { testCore } from "./coreLayer.js"
import { FakeProver, type FakeProverOptions } from "./fakeProver.js"
import { SqliteMemoryStore } from "./sqliteMemoryStore.js"
import { makeScriptedTransport, type Script, type ScriptedResponse, type ScriptedTransport } from "./scriptedTransport.js"

/** The scripted webhook transport of a `testService`: what each endpoint answers, and every request sent. */
export class ScriptedWebhooks extends Context.Tag("@mzk/testkit/ScriptedWebhooks")<ScriptedWebhooks, ScriptedTransport>() {}

export interface TestServiceOptions<E = never, R = never> {
  /** What each webhook URL answers, per attempt (see `makeScriptedTransport`); others get `fallback`. */
  readonly webhooks?: Script
  /** The answer of URLs the script does not name (default 200). */
  readonly fallback?: ScriptedResponse
  /** Where `TestClock` starts (default 2026-01-01T00:00:00Z), set before the loops start. */
  readonly startAt?: Date | number
  /** Seed of ids and secrets (see `SeededEntropy`). */
  readonly seed?: string | number
  readonly prover?: FakeProverOptions
  /** Another store than SQLite in memory, e.g. a SQLite file or PostgreSQL, to run the same test over it. */
  readonly store?: Layer.Layer<Storage, E, R>
  /** Settings over the defaults; the loops poll and the retention sweeps run once a day unless given. */
  readonly webhookConfig?: Partial<WebhookConfigShape>
  readonly proofsConfig?: Partial<ProofsConfigShape>
  readonly circuitsConfig?: Partial<CircuitsConfigShape>
  /** Event retention (default 30 days) and its sweep. */
  readonly eventsConfig?: Partial<EventsConfigShape>
  /** Webhook recoveries: their batch size and the loop's poll. */
  readonly recoveryConfig?: Partial<RecoveryConfigShape>
}

/** 2026-01-01T00:00:00Z: a start far from 1970, so timestamps read as real ones. */
export const TEST_SERVICE_START = Date.UTC(2026, 0, 1)

// Work recorded in this process wakes the loops at once; their polls are for work of other
// processes, of which a test has none. Every wake-up a TestClock move passes costs real time (the
// clock waits for the fibers to suspend, a few ms): at the default 1 s polls and 1 min sweeps,
// 8 simulated hours took over 10 s. The retention sweep is woken by nothing, so proofs expire at
// the first daily sweep after `expires_at` unless `proofsConfig.sweepIntervalMs` says otherwise, and
// events are deleted at the first daily sweep past the retention window.
const A_DAY = 86_400_000

/**
 * The whole service in-process, for tests of code built on mzk: the core services (`Accounts`,
 * `ApiKeys`, `Webhooks`, `Proofs`, `Circuits`, …) over SQLite in memory, seeded entropy, the fake
 * prover and compiler, with the background loops running (proof worker, retention sweepers, webhook
 * delivery engine and recoveries, circuit builds) and webhooks sent through a scripted transport
 * (`ScriptedWebhooks`). Time is `TestClock`'s: move it with `TestClock.adjust` and every retry,
 * proof and timeout due by then happens, in order, without waiting. Provide it to a test run
 * under a test clock (`it.effect` of `@effect/vitest`, or `TestContext.TestContext`).
 */
export const testService = <E = never, R = never>(options: TestServiceOptions<E, R> = {}) =>
  Layer.unwrapEffect(Effect.gen(function*() {
    // Set before the loops start: a loop started at 1970 would otherwise catch up on every poll since.
    yield* TestClock.setTime(options.startAt === undefined ? TEST_SERVICE_START : new Date(options.startAt).getTime())
    const scripted = yield* makeScriptedTransport(options.webhooks, options.fallback)
    const configs = Layer.mergeAll(
      Layer.succeed(WebhookConfig, { ...DEFAULT_WEBHOOK_CONFIG, pollIntervalMs: A_DAY, ...options.webhookConfig }),
      Layer.succeed(ProofsConfig, { ...DEFAULT_PROOFS_CONFIG, pollIntervalMs: A_DAY, sweepIntervalMs: A_DAY, ...options.proofsConfig }),
      Layer.succeed(CircuitsConfig, { ...DEFAULT_CIRCUITS_CONFIG, pollIntervalMs: A_DAY, ...options.circuitsConfig }),
      Layer.succeed(EventsConfig, { ...DEFAULT_EVENTS_CONFIG, sweepIntervalMs: A_DAY, ...options.eventsConfig }),
      Layer.succeed(RecoveryConfig, { ...DEFAULT_RECOVERY_CONFIG, pollIntervalMs: A_DAY, ...options.recoveryConfig }),
      // Expired idempotency keys and audit entries are swept daily too: an hourly sweep costs a walk
      // of 30 days 720 wake-ups.
      Layer.succeed(IdempotencyConfig, { ...DEFAULT_IDEMPOTENCY_CONFIG, sweepIntervalMs: A_DAY }),
      Layer.succeed(AuditConfig, { ...DEFAULT_AUDIT_CONFIG, sweepIntervalMs: A_DAY })
    )
    const core = testCore(options.store ?? (SqliteMemoryStore as Layer.Layer<Storage, E, R>), {
      ...(options.seed === undefined ? {} : { seed: options.seed }),
      prover: FakeProver(options.prover)
    })
    return CoreLoops.pipe(
      Layer.provide(scripted.layer),
      Layer.provideMerge(core),
      Layer.provideMerge(Layer.succeed(ScriptedWebhooks, scripted)),
      Layer.provideMerge(configs)
    )
  }))
