import { describe, expect, it } from "@effect/vitest"
import {
  type AccountId,
  Accounts,
  DEFAULT_EVENTS_CONFIG,
  type EventId,
  type EventRecord,
  Events,
  EventsRepo,
  type EventSubscriber,
  EventSubscribers,
  Ids,
  StorageError,
  sweepExpiredEvents,
  type Timestamp,
  timestampFromMillis,
  Transactor
} from "@mzk/core"
import { testCore } from "@mzk/testkit"
import { Clock, Effect, Layer, Option, TestClock } from "effect"

const DAY = 86_400_000

/** The outbox over the test store, with `subscribers` in place of the ones `CoreServices` lists. */
const outbox = <R>(...subscribers: ReadonlyArray<Effect.Effect<EventSubscriber, never, R>>) => {
  const core = testCore()
  // The later layer of a merge wins: this Events replaces the one CoreServices builds, over the same
  // store. Fresh, or the layer memoized by reference would be CoreServices' own.
  return Layer.merge(core, Layer.fresh(Events.layer).pipe(Layer.provideMerge(EventSubscribers.layer(...subscribers)), Layer.provide(core)))
}

const newAccount = Effect.map(Effect.flatMap(Accounts, (a) => a.create({ name: "Acme" })), (a) => a.id)

/** An event whose `data.message` is `name`, so a test can tell its events apart. */
const recordNamed = (account: AccountId, name: string) =>
  Effect.gen(function*() {
    const webhookId = yield* (yield* Ids).make("webhook")
    return yield* (yield* Events).record(account, "webhook.test", { webhook_id: webhookId, message: name, metadata: {} })
  })

const names = (account: AccountId) =>
  Effect.map(Effect.flatMap(Events, (events) => events.list(account)), (found) => found.events.map((e) => e.data["message"]))

describe("the events outbox and its subscribers", () => {
  it.effect("a subscriber runs inside the recording transaction, after the insert: its failure leaves no event", () => {
    const seen: Array<Option.Option<EventRecord>> = []
    const refusing = Effect.map(EventsRepo, (repo): EventSubscriber => ({
      recorded: (event) =>
        Effect.flatMap(repo.get(event.id), (found) => {
          seen.push(found)
          return event.data["message"] === "refused" ? Effect.fail(new StorageError({ message: "refused by the subscriber" })) : Effect.void
        })
    }))
    return Effect.gen(function*() {
      const account = yield* newAccount
      yield* recordNamed(account, "kept")
      const failure = yield* Effect.flip(recordNamed(account, "refused"))
      expect(failure.message).toBe("refused by the subscriber")
      // The subscriber read each event back in its transaction; the refused one was rolled back with it.
      expect(seen.map(Option.isSome)).toEqual([true, true])
      expect(yield* names(account)).toEqual(["kept"])
    }).pipe(Effect.provide(outbox(refusing)))
  })

  it.effect("joins the caller's transaction: a cause that fails after recording leaves no event, though its subscribers ran", () => {
    const recorded: Array<string> = []
    const counting = Effect.succeed<EventSubscriber>({ recorded: (event) => Effect.sync(() => void recorded.push(event.id)) })
    return Effect.gen(function*() {
      const account = yield* newAccount
      const tx = yield* Transactor
      const failed = yield* Effect.flip(tx.transaction(Effect.zipRight(recordNamed(account, "cause"), Effect.fail("cause failed"))))
      expect(failed).toBe("cause failed")
      expect(recorded.length).toBe(1)
      expect(yield* names(account)).toEqual([])
    }).pipe(Effect.provide(outbox(counting)))
  })

  it.effect("the subscriber list is built once, with the layer, and runs in its order for every event", () => {
    const calls: Array<string> = []
    let built = 0
    const subscriber = (name: string) =>
      Effect.sync((): EventSubscriber => {
        built += 1
        return { recorded: (event) => Effect.sync(() => void calls.push(`${name}:${event.data["message"]}`)) }
      })
    return Effect.gen(function*() {
      const account = yield* newAccount
      for (const name of ["a", "b", "c"]) yield* recordNamed(account, name)
      expect(built).toBe(2)
      expect(calls).toEqual(["first:a", "second:a", "first:b", "second:b", "first:c", "second:c"])
    }).pipe(Effect.provide(outbox(subscriber("first"), subscriber("second"))))
  })

  it.effect("the retention sweep deletes the expired events first, then hands each subscriber the window's cutoff", () => {
    const expired: Array<{ readonly before: Timestamp; readonly batchSize: number; readonly eventLeft: boolean }> = []
    let old: EventId | undefined
    const keeping = Effect.map(EventsRepo, (repo): EventSubscriber => ({
      recorded: () => Effect.void,
      expire: (before, batchSize) =>
        Effect.map(repo.get(old!), (found) => void expired.push({ before, batchSize, eventLeft: Option.isSome(found) }))
    }))
    return Effect.gen(function*() {
      const account = yield* newAccount
      old = (yield* recordNamed(account, "old")).id
      yield* TestClock.adjust(DEFAULT_EVENTS_CONFIG.retentionMs + DAY)
      expect(yield* sweepExpiredEvents).toBe(1)
      expect(expired).toEqual([{
        before: timestampFromMillis((yield* Clock.currentTimeMillis) - DEFAULT_EVENTS_CONFIG.retentionMs),
        batchSize: DEFAULT_EVENTS_CONFIG.sweepBatchSize,
        eventLeft: false
      }])
    }).pipe(Effect.provide(outbox(keeping)))
  })
})
