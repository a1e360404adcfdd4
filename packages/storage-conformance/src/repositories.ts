import { expect } from "@effect/vitest"
import {
  AccountId,
  AccountsRepo,
  DeliveriesRepo,
  type DeliveryRecord,
  EventsRepo,
  KeysRepo,
  makeId,
  type Page,
  now,
  RateLimitsRepo,
  type Timestamp,
  WebhooksRepo
} from "@mzk/core"
import { Effect, Option, Schema } from "effect"
import type { ConformanceIt } from "./env.js"
import { eventRecord, freshAccount, keyRecord, NOW, webhookRecord } from "./fixtures.js"

const at = (iso: string) => iso as Timestamp

export const repositoryTests = (it: ConformanceIt, timeout: number) => {
  it.effect("accounts: insert then get; unknown ids are none", () =>
    Effect.gen(function*() {
      const repo = yield* AccountsRepo
      const account = { id: yield* makeId("account"), name: "Acme Ltd", created_at: yield* now }
      yield* repo.insert(account)
      expect(yield* repo.get(account.id)).toEqual(Option.some(account))
      expect(Option.isNone(yield* repo.get(Schema.decodeSync(AccountId)("acct_00000000000000000000000000")))).toBe(true)
    }), timeout)

  it.effect("keys: insert, findByHash and listActive (this account's active keys, newest first)", () =>
    Effect.gen(function*() {
      const repo = yield* KeysRepo
      const account = yield* freshAccount
      const other = yield* freshAccount
      const first = yield* keyRecord(account, { description: "deploys", scopes: ["proofs:read"] })
      const second = yield* keyRecord(account, { last_used_at: at("2026-01-01T00:00:00.000Z") })
      const foreign = yield* keyRecord(other)
      for (const key of [second, first, foreign]) yield* repo.insert(key, { maxActive: 10, now: NOW })
      expect(yield* repo.findByHash(first.hash)).toEqual(Option.some(first))
      expect(Option.isNone(yield* repo.findByHash("0".repeat(64)))).toBe(true)
      const listed = yield* repo.listActive(account, NOW)
      expect(listed).toEqual([first, second].sort((a, b) => (a.id < b.id ? 1 : -1)))
      yield* repo.revoke(account, first.id, yield* now)
      expect((yield* repo.listActive(account, NOW)).map((k) => k.id)).toEqual([second.id])
    }), timeout)

  it.effect("keys: insert refuses past maxActive with KeyLimitReached; revoked keys do not count", () =>
    Effect.gen(function*() {
      const repo = yield* KeysRepo
      const account = yield* freshAccount
      const keys = yield* Effect.all(Array.from({ length: 3 }, () => keyRecord(account)))
      for (const key of keys) yield* repo.insert(key, { maxActive: 3, now: NOW })
      const extra = yield* keyRecord(account)
      const refused = yield* Effect.flip(repo.insert(extra, { maxActive: 3, now: NOW }))
      expect(refused._tag).toBe("KeyLimitReached")
      expect(Option.isNone(yield* repo.findByHash(extra.hash))).toBe(true)
      yield* repo.revoke(account, keys[0]!.id, yield* now)
      yield* repo.insert(extra, { maxActive: 3, now: NOW })
      expect((yield* repo.listActive(account, NOW)).length).toBe(3)
    }), timeout)

  it.effect("keys: revoke once, only in the owning account; the revoked key stays findable", () =>
    Effect.gen(function*() {
      const repo = yield* KeysRepo
      const account = yield* freshAccount
      const other = yield* freshAccount
      const key = yield* keyRecord(account)
      yield* repo.insert(key, { maxActive: 10, now: NOW })
      expect(Option.isNone(yield* repo.revoke(other, key.id, yield* now))).toBe(true)
      const revokedAt = at("2026-03-04T05:06:07.089Z")
      expect(yield* repo.revoke(account, key.id, revokedAt)).toEqual(Option.some({ ...key, revoked_at: revokedAt }))
      expect(Option.isNone(yield* repo.revoke(account, key.id, revokedAt))).toBe(true)
      expect(Option.map(yield* repo.findByHash(key.hash), (k) => k.revoked_at)).toEqual(Option.some(revokedAt))
      expect(Option.isNone(yield* repo.revoke(account, (yield* keyRecord(account)).id, revokedAt))).toBe(true)
    }), timeout)

  it.effect("keys: an expired key is not active: not listed, not counted, not revocable, not rolled", () =>
    Effect.gen(function*() {
      const repo = yield* KeysRepo
      const account = yield* freshAccount
      const T1 = at("2026-01-01T01:00:00.000Z")
      const T2 = at("2026-01-01T02:00:00.000Z")
      const expiring = yield* keyRecord(account, { expires_at: T1 })
      const lasting = yield* keyRecord(account)
      yield* repo.insert(expiring, { maxActive: 2, now: NOW })
      yield* repo.insert(lasting, { maxActive: 2, now: NOW })
      expect((yield* repo.listActive(account, NOW)).map((k) => k.id)).toEqual([lasting.id, expiring.id])
      expect((yield* Effect.flip(repo.insert(yield* keyRecord(account), { maxActive: 2, now: NOW })))._tag).toBe("KeyLimitReached")
      // At T1 the first has expired: it is gone from the list and frees its place.
      expect((yield* repo.listActive(account, T1)).map((k) => k.id)).toEqual([lasting.id])
      yield* repo.insert(yield* keyRecord(account), { maxActive: 2, now: T1 })
      expect(Option.isNone(yield* repo.revoke(account, expiring.id, T1))).toBe(true)
      expect(yield* repo.roll(account, expiring.id, { until: T2, replacedBy: (yield* keyRecord(account)).id, now: T1 })).toEqual({ _tag: "not_found" })
    }), timeout)

  it.effect("keys: roll marks the owner's active key replaced once, never lengthens its life, and gives the expiry it had", () =>
    Effect.gen(function*() {
      const repo = yield* KeysRepo
      const account = yield* freshAccount
      const T1 = at("2026-01-01T01:00:00.000Z")
      const T2 = at("2026-01-01T02:00:00.000Z")
      const successor = (yield* keyRecord(account)).id
      const lasting = yield* keyRecord(account)
      const ending = yield* keyRecord(account, { expires_at: T1 })
      yield* repo.insert(lasting, { maxActive: 10, now: NOW })
      yield* repo.insert(ending, { maxActive: 10, now: NOW })
      expect(yield* repo.roll(yield* freshAccount, lasting.id, { until: T2, replacedBy: successor, now: NOW })).toEqual({ _tag: "not_found" })
      const rolled = { ...lasting, expires_at: T2, replaced_by: successor }
      expect(yield* repo.roll(account, lasting.id, { until: T2, replacedBy: successor, now: NOW })).toEqual({
        _tag: "rolled",
        key: rolled,
        previousExpiresAt: null
      })
      expect(yield* repo.findByHash(lasting.hash)).toEqual(Option.some(rolled))
      // Rolled once: a second roll changes nothing, and names the first one's successor.
      const other = (yield* keyRecord(account)).id
      expect(yield* repo.roll(account, lasting.id, { until: T1, replacedBy: other, now: NOW })).toEqual({ _tag: "already_rolled", key: rolled })
      expect(yield* repo.findByHash(lasting.hash)).toEqual(Option.some(rolled))
      // The earlier of the two ends stands.
      expect(yield* repo.roll(account, ending.id, { until: T2, replacedBy: other, now: NOW })).toEqual({
        _tag: "rolled",
        key: { ...ending, replaced_by: other },
        previousExpiresAt: T1
      })
      // Once it stops working, a rolled key is not found, like any other that does not work.
      expect(yield* repo.roll(account, lasting.id, { until: T2, replacedBy: other, now: T2 })).toEqual({ _tag: "not_found" })
      yield* repo.revoke(account, ending.id, NOW)
      expect(yield* repo.roll(account, ending.id, { until: T2, replacedBy: other, now: NOW })).toEqual({ _tag: "not_found" })
    }), timeout)

  it.effect("keys: touch writes when last_used_at is null or older than staleBefore, else not", () =>
    Effect.gen(function*() {
      const repo = yield* KeysRepo
      const account = yield* freshAccount
      const key = yield* keyRecord(account)
      yield* repo.insert(key, { maxActive: 10, now: NOW })
      const lastUsed = (hash: string) => Effect.map(repo.findByHash(hash), Option.map((k) => k.last_used_at))
      expect(yield* repo.touch(key.id, at("2026-01-01T00:00:00.000Z"), at("2025-12-31T23:59:00.001Z"))).toBe(true)
      expect(yield* lastUsed(key.hash)).toEqual(Option.some("2026-01-01T00:00:00.000Z"))
      expect(yield* repo.touch(key.id, at("2026-01-01T00:00:59.999Z"), at("2026-01-01T00:00:00.000Z"))).toBe(false)
      expect(yield* lastUsed(key.hash)).toEqual(Option.some("2026-01-01T00:00:00.000Z"))
      expect(yield* repo.touch(key.id, at("2026-01-01T00:01:00.000Z"), at("2026-01-01T00:00:00.001Z"))).toBe(true)
      expect(yield* lastUsed(key.hash)).toEqual(Option.some("2026-01-01T00:01:00.000Z"))
    }), timeout)

  it.effect("webhooks: insert and get within the owning account only", () =>
    Effect.gen(function*() {
      const repo = yield* WebhooksRepo
      const account = yield* freshAccount
      const other = yield* freshAccount
      const webhook = yield* webhookRecord(account, { description: "billing", events: ["proof.failed"] })
      yield* repo.insert(webhook, { maxPerAccount: 20 })
      expect(yield* repo.get(account, webhook.id)).toEqual(Option.some(webhook))
      expect(Option.isNone(yield* repo.get(other, webhook.id))).toBe(true)
    }), timeout)

  it.effect("lists page newest first; starting_after moves to older rows, ending_before back to newer ones", () =>
    Effect.gen(function*() {
      const repo = yield* WebhooksRepo
      const account = yield* freshAccount
      const made = yield* Effect.all(Array.from({ length: 5 }, () => webhookRecord(account)))
      for (const webhook of made) yield* repo.insert(webhook, { maxPerAccount: 20 })
      yield* repo.insert(yield* webhookRecord(yield* freshAccount), { maxPerAccount: 20 })
      const ids = made.map((w) => w.id).sort().reverse()
      const listed = (page: Page) => Effect.map(repo.list(account, page), (found) => [found.items.map((w) => w.id), found.total, found.has_more])
      // Back from the oldest: the page just before it, still newest first, has_more toward newer rows.
      expect(yield* listed({ limit: 2, endingBefore: ids[4] })).toEqual([ids.slice(2, 4), 5, true])
      expect(yield* listed({ limit: 2, endingBefore: ids[2] })).toEqual([ids.slice(0, 2), 5, false])
      expect(yield* listed({ limit: 10, endingBefore: ids[3] })).toEqual([ids.slice(0, 3), 5, false])
      expect(yield* listed({ limit: 2, endingBefore: ids[0] })).toEqual([[], 5, false])
      // A cursor that matches no row pages from where it would sort.
      expect(yield* listed({ limit: 2, endingBefore: `wh_${"0".repeat(26)}` })).toEqual([ids.slice(3), 5, true])
      expect(yield* listed({ limit: 2, startingAfter: `wh_${"z".repeat(26)}` })).toEqual([ids.slice(0, 2), 5, true])
      const last = yield* repo.list(account, { limit: 2, startingAfter: ids[3] })
      expect(last.items[0]).toEqual(made.find((w) => w.id === ids[4]))
    }), timeout)

  it.effect("lists page newest first by default, starting_after moving to older rows, with total and has_more", () =>
    Effect.gen(function*() {
      const repo = yield* WebhooksRepo
      const account = yield* freshAccount
      const made = yield* Effect.all(Array.from({ length: 5 }, () => webhookRecord(account)))
      for (const webhook of made) yield* repo.insert(webhook, { maxPerAccount: 20 })
      const ids = made.map((w) => w.id).sort().reverse()
      const first = yield* repo.list(account, { limit: 2 })
      expect(first.items.map((w) => w.id)).toEqual(ids.slice(0, 2))
      expect([first.total, first.has_more]).toEqual([5, true])
      const second = yield* repo.list(account, { limit: 2, startingAfter: ids[1] })
      expect(second.items.map((w) => w.id)).toEqual(ids.slice(2, 4))
      const last = yield* repo.list(account, { limit: 2, startingAfter: ids[3] })
      expect(last.items.map((w) => w.id)).toEqual(ids.slice(4))
      expect([last.total, last.has_more]).toEqual([5, false])
    }), timeout)

  it.effect("webhooks: update changes only the given fields and updated_at; foreign ids are none", () =>
    Effect.gen(function*() {
      const repo = yield* WebhooksRepo
      const account = yield* freshAccount
      const webhook = yield* webhookRecord(account)
      yield* repo.insert(webhook, { maxPerAccount: 20 })
      const later = at("2026-05-05T05:05:05.555Z")
      const updated = yield* repo.update(account, webhook.id, { active: false, disabled_reason: "delivery_failures" }, later)
      expect(updated).toEqual(Option.some({ ...webhook, active: false, disabled_reason: "delivery_failures", updated_at: later }))
      const again = yield* repo.update(account, webhook.id, {
        url: "https://other.example.com/x",
        events: ["key.revoked"],
        description: "new",
        active: true,
        disabled_reason: null
      }, later)
      expect(again).toEqual(Option.some({
        ...webhook,
        url: "https://other.example.com/x",
        events: ["key.revoked"],
        description: "new",
        updated_at: later
      }))
      expect(yield* repo.get(account, webhook.id)).toEqual(again)
      expect(Option.isNone(yield* repo.update(yield* freshAccount, webhook.id, { active: false }, later))).toBe(true)
    }), timeout)

  it.effect("webhooks: remove deletes once, only in the owning account", () =>
    Effect.gen(function*() {
      const repo = yield* WebhooksRepo
      const account = yield* freshAccount
      const webhook = yield* webhookRecord(account)
      yield* repo.insert(webhook, { maxPerAccount: 20 })
      expect(yield* repo.remove(yield* freshAccount, webhook.id)).toBe(false)
      expect(yield* repo.remove(account, webhook.id)).toBe(true)
      expect(yield* repo.remove(account, webhook.id)).toBe(false)
      expect(Option.isNone(yield* repo.get(account, webhook.id))).toBe(true)
    }), timeout)

  it.effect("webhooks: listSubscribed returns the account's active webhooks subscribed to the type", () =>
    Effect.gen(function*() {
      const repo = yield* WebhooksRepo
      const account = yield* freshAccount
      const subscribed = yield* webhookRecord(account, { events: ["proof.failed", "key.created"] })
      const inactive = yield* webhookRecord(account, { events: ["key.created"], active: false })
      const otherType = yield* webhookRecord(account, { events: ["proof.completed"] })
      const foreign = yield* webhookRecord(yield* freshAccount, { events: ["key.created"] })
      for (const w of [subscribed, inactive, otherType, foreign]) yield* repo.insert(w, { maxPerAccount: 20 })
      expect(yield* repo.listSubscribed(account, "key.created")).toEqual([subscribed])
      expect(yield* repo.listSubscribed(account, "proof.verified")).toEqual([])
    }), timeout)

  it.effect("webhooks: insert refuses past maxPerAccount with WebhookLimitReached", () =>
    Effect.gen(function*() {
      const repo = yield* WebhooksRepo
      const account = yield* freshAccount
      for (let i = 0; i < 2; i++) yield* repo.insert(yield* webhookRecord(account), { maxPerAccount: 2 })
      const extra = yield* webhookRecord(account)
      expect((yield* Effect.flip(repo.insert(extra, { maxPerAccount: 2 })))._tag).toBe("WebhookLimitReached")
      expect(Option.isNone(yield* repo.get(account, extra.id))).toBe(true)
    }), timeout)

  it.effect("events: insert, get (data kept as JSON) and list in pages, newest first", () =>
    Effect.gen(function*() {
      const repo = yield* EventsRepo
      const account = yield* freshAccount
      const made = yield* Effect.all(Array.from({ length: 3 }, () => eventRecord(account)))
      for (const event of made) yield* repo.insert(event)
      yield* repo.insert(yield* eventRecord(yield* freshAccount))
      expect(yield* repo.get(made[1]!.id)).toEqual(Option.some(made[1]))
      const ids = made.map((e) => e.id).sort().reverse()
      const page = yield* repo.list(account, { limit: 2 })
      expect(page.items.map((e) => e.id)).toEqual(ids.slice(0, 2))
      expect([page.total, page.has_more]).toEqual([3, true])
      const rest = yield* repo.list(account, { limit: 2, startingAfter: ids[1] })
      expect(rest.items).toEqual([made.find((e) => e.id === ids[2])])
      expect(rest.has_more).toBe(false)
      const back = yield* repo.list(account, { limit: 1, endingBefore: ids[2] })
      expect([back.items.map((e) => e.id), back.has_more]).toEqual([[ids[1]], true])
    }), timeout)

  it.effect("deliveries: insertMany then listByEvent in id order", () =>
    Effect.gen(function*() {
      const repo = yield* DeliveriesRepo
      const account = yield* freshAccount
      const event = yield* eventRecord(account)
      yield* (yield* EventsRepo).insert(event)
      const webhooks = yield* Effect.all(Array.from({ length: 3 }, () => webhookRecord(account)))
      for (const w of webhooks) yield* (yield* WebhooksRepo).insert(w, { maxPerAccount: 20 })
      const createdAt = yield* now
      const rows: Array<DeliveryRecord> = []
      for (const webhook of webhooks) {
        rows.push({
          id: yield* makeId("delivery"),
          account_id: account,
          event_id: event.id,
          webhook_id: webhook.id,
          status: "pending",
          trigger: "scheduled",
          attempts: 0,
          next_attempt_at: createdAt,
          lease_expires_at: null,
          first_failed_at: null,
          last_attempt_at: null,
          created_at: createdAt,
          updated_at: createdAt
        })
      }
      yield* repo.insertMany(rows)
      yield* repo.insertMany([])
      expect(yield* repo.listByEvent(event.id)).toEqual([...rows].sort((a, b) => (a.id < b.id ? -1 : 1)))
    }), timeout)

  it.effect("rate limits: consume charges every bucket or none, and a newer window starts from zero", () =>
    Effect.gen(function*() {
      const repo = yield* RateLimitsRepo
      const tag = (yield* makeId("request")).slice(4)
      const a = { bucket: `a:${tag}`, window_start: 60_000, limit: 3, cost: 1 }
      const b = { bucket: `b:${tag}`, window_start: 0, limit: 5, cost: 2 }
      expect(yield* repo.consume([a, b])).toEqual({ admitted: true, counts: [1, 2] })
      expect(yield* repo.consume([a, b])).toEqual({ admitted: true, counts: [2, 4] })
      // b has 1 left but this costs 2: nothing is charged, a included.
      expect(yield* repo.consume([a, b])).toEqual({ admitted: false, counts: [2, 4] })
      expect(yield* repo.consume([{ ...b, cost: 0 }])).toEqual({ admitted: true, counts: [4] })
      expect(yield* repo.consume([a])).toEqual({ admitted: true, counts: [3] })
      expect(yield* repo.consume([a])).toEqual({ admitted: false, counts: [3] })
      expect(yield* repo.consume([{ ...a, window_start: 120_000 }])).toEqual({ admitted: true, counts: [1] })
      expect(yield* repo.consume([{ ...b, window_start: 86_400_000, cost: 6 }])).toEqual({ admitted: false, counts: [0] })
      // A bucket seen before beside one never seen: the new counter is created and both are charged.
      const c = { bucket: `c:${tag}`, window_start: 0, limit: 1, cost: 1 }
      expect(yield* repo.consume([{ ...a, window_start: 120_000 }, c])).toEqual({ admitted: true, counts: [2, 1] })
      expect(yield* repo.consume([{ ...a, window_start: 120_000 }, c])).toEqual({ admitted: false, counts: [2, 1] })
    }), timeout)
}
