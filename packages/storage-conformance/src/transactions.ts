import { expect } from "@effect/vitest"
import { AccountsRepo, DeliveriesRepo, Events, EventsRepo, KeysRepo, makeId, now, StorageHealth, Transactor, WebhooksRepo } from "@mzk/core"
import { Effect, Option } from "effect"
import type { ConformanceIt } from "./env.js"
import { freshAccount, keyRecord, NOW, webhookRecord } from "./fixtures.js"

export const transactionTests = (it: ConformanceIt, timeout: number) => {
  it.effect("health: a migrated store answers its check with no pending migrations and takes its write, also from many checks at once", () =>
    Effect.gen(function*() {
      const health = yield* StorageHealth
      // No `writeFailure`: the check's write succeeded (a probe is one upsert, so concurrent ones
      // from many processes never collide).
      expect(yield* health.check).toEqual({ pendingMigrations: [] })
      const all = yield* Effect.all(Array.from({ length: 20 }, () => health.check), { concurrency: "unbounded" })
      expect(all).toEqual(Array.from({ length: 20 }, () => ({ pendingMigrations: [] })))
    }), timeout)

  it.effect("transaction: a failure rolls back every write made inside it", () =>
    Effect.gen(function*() {
      const tx = yield* Transactor
      const accounts = yield* AccountsRepo
      const keys = yield* KeysRepo
      const account = { id: yield* makeId("account"), name: "rolled back", created_at: yield* now }
      const key = yield* keyRecord(account.id)
      const failure = yield* Effect.flip(tx.transaction(Effect.gen(function*() {
        yield* accounts.insert(account)
        yield* keys.insert(key, { maxActive: 10, now: NOW })
        return yield* Effect.fail("boom" as const)
      })))
      expect(failure).toBe("boom")
      expect(Option.isNone(yield* accounts.get(account.id))).toBe(true)
      expect(Option.isNone(yield* keys.findByHash(key.hash))).toBe(true)
    }), timeout)

  it.effect("transaction: a defect rolls back too, and a success commits", () =>
    Effect.gen(function*() {
      const tx = yield* Transactor
      const accounts = yield* AccountsRepo
      const lost = { id: yield* makeId("account"), name: "defect", created_at: yield* now }
      const exit = yield* Effect.exit(tx.transaction(Effect.zipRight(accounts.insert(lost), Effect.dieMessage("bug"))))
      expect(exit._tag).toBe("Failure")
      expect(Option.isNone(yield* accounts.get(lost.id))).toBe(true)
      const kept = { id: yield* makeId("account"), name: "kept", created_at: yield* now }
      expect(yield* tx.transaction(Effect.as(accounts.insert(kept), 42))).toBe(42)
      expect(yield* accounts.get(kept.id)).toEqual(Option.some(kept))
    }), timeout)

  it.effect("transaction: a nested transaction joins the outer one and rolls back with it", () =>
    Effect.gen(function*() {
      const tx = yield* Transactor
      const keys = yield* KeysRepo
      const account = yield* freshAccount
      const inner = yield* keyRecord(account)
      const outer = yield* keyRecord(account)
      yield* Effect.flip(tx.transaction(Effect.gen(function*() {
        yield* tx.transaction(keys.insert(inner, { maxActive: 10, now: NOW }))
        yield* keys.insert(outer, { maxActive: 10, now: NOW })
        return yield* Effect.fail("late failure")
      })))
      expect(yield* keys.listActive(account, NOW)).toEqual([])
    }), timeout)

  it.effect("afterCommit: runs once the outermost transaction has committed, never after a rollback, at once outside one", () =>
    Effect.gen(function*() {
      const tx = yield* Transactor
      const accounts = yield* AccountsRepo
      const account = { id: yield* makeId("account"), name: "hooked", created_at: yield* now }
      // What each hook saw: whether the account was visible from outside the transaction.
      const seen: Array<string> = []
      const look = (label: string) =>
        Effect.flatMap(accounts.get(account.id), (found) => Effect.sync(() => void seen.push(`${label}:${Option.isSome(found)}`))).pipe(Effect.orDie)
      yield* tx.transaction(Effect.gen(function*() {
        yield* accounts.insert(account)
        yield* tx.transaction(tx.afterCommit(look("nested")))
        yield* tx.afterCommit(look("outer"))
        expect(seen).toEqual([])
      }))
      expect(seen).toEqual(["nested:true", "outer:true"])
      yield* Effect.flip(tx.transaction(Effect.zipRight(tx.afterCommit(look("rolled back")), Effect.fail("no"))))
      expect(seen).toHaveLength(2)
      yield* tx.afterCommit(look("outside"))
      expect(seen).toEqual(["nested:true", "outer:true", "outside:true"])
    }), timeout)

  it.effect("outbox: an event and its deliveries roll back with the change that caused them", () =>
    Effect.gen(function*() {
      const tx = yield* Transactor
      const account = yield* freshAccount
      const webhook = yield* webhookRecord(account, { events: ["key.revoked"] })
      yield* (yield* WebhooksRepo).insert(webhook, { maxPerAccount: 20 })
      const events = yield* Events
      const data = { id: (yield* keyRecord(account)).id, name: "gone", revoked_at: yield* now, metadata: {} }
      const committed = yield* events.record(account, "key.revoked", data)
      const deliveries = yield* (yield* DeliveriesRepo).listByEvent(committed.id)
      expect(deliveries.map((d) => [d.webhook_id, d.status, d.attempts])).toEqual([[webhook.id, "pending", 0]])
      let rolledBack = committed
      yield* Effect.flip(tx.transaction(Effect.gen(function*() {
        rolledBack = yield* events.record(account, "key.revoked", data)
        return yield* Effect.fail("cause failed")
      })))
      expect(Option.isNone(yield* (yield* EventsRepo).get(rolledBack.id))).toBe(true)
      expect(yield* (yield* DeliveriesRepo).listByEvent(rolledBack.id)).toEqual([])
    }), timeout)
}
