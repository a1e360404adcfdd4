import { expect } from "@effect/vitest"
import { CircuitsRepo, KeysRepo, type Metadata, ProofsRepo, WebhooksRepo } from "@mzk/core"
import { Effect, Option } from "effect"
import { inserted as insertedCircuit } from "./circuits.js"
import type { ConformanceIt } from "./env.js"
import { freshAccount, keyRecord, NOW, webhookRecord } from "./fixtures.js"
import { completion, proofRecord, T0 } from "./proofs.js"

/** Keys of every allowed character class, and values no JSON path or containment test may mangle. */
const ODD: Metadata = { "order.id": "ord_1", "ns:key": "a \"quoted\" value", "_-": "ünïcödé ✓", "k": "[1,2]", "n": "{}" }

export const metadataTests = (it: ConformanceIt, timeout: number) => {
  it.effect("metadata: stored and read back as set on proofs, keys, webhooks and circuits", () =>
    Effect.gen(function*() {
      const account = yield* freshAccount
      const proofs = yield* ProofsRepo
      const proof = yield* proofRecord(account, { metadata: ODD })
      const bare = yield* proofRecord(account)
      yield* proofs.insertMany([proof, bare])
      expect(Option.map(yield* proofs.get(account, proof.id), (p) => p.metadata)).toEqual(Option.some(ODD))
      expect(Option.map(yield* proofs.get(account, bare.id), (p) => p.metadata)).toEqual(Option.some({}))

      const keys = yield* KeysRepo
      const key = yield* keyRecord(account, { metadata: ODD })
      yield* keys.insert(key, { maxActive: 10, now: NOW })
      expect((yield* keys.listActive(account, NOW)).map((k) => k.metadata)).toEqual([ODD])

      const webhooks = yield* WebhooksRepo
      const webhook = yield* webhookRecord(account, { metadata: ODD })
      yield* webhooks.insert(webhook, { maxPerAccount: 20 })
      expect(Option.map(yield* webhooks.get(account, webhook.id), (w) => w.metadata)).toEqual(Option.some(ODD))

      const circuit = yield* insertedCircuit(account, { metadata: ODD })
      expect(Option.map(yield* (yield* CircuitsRepo).getByName(account, circuit.name), (c) => c.metadata)).toEqual(Option.some(ODD))
    }), timeout)

  it.effect("metadata: a webhook update merges its patch in the write (null deletes), and leaves it alone without one", () =>
    Effect.gen(function*() {
      const account = yield* freshAccount
      const repo = yield* WebhooksRepo
      const webhook = yield* webhookRecord(account, { metadata: { env: "prod", owner: "ops", keep: "1" } })
      yield* repo.insert(webhook, { maxPerAccount: 20 })
      const merged = yield* repo.update(account, webhook.id, { metadata: { env: "staging", owner: null, region: "eu" } }, NOW)
      expect(Option.map(merged, (w) => w.metadata)).toEqual(Option.some({ env: "staging", keep: "1", region: "eu" }))
      // A patch of another key, as a concurrent update would send, keeps the first one's.
      yield* repo.update(account, webhook.id, { metadata: { tier: "gold" } }, NOW)
      const untouched = yield* repo.update(account, webhook.id, { description: "d" }, NOW)
      expect(Option.map(untouched, (w) => w.metadata)).toEqual(Option.some({ env: "staging", keep: "1", region: "eu", tier: "gold" }))
      // Deleting a key that is not there is nothing; deleting every key leaves `{}`.
      const emptied = yield* repo.update(account, webhook.id, { metadata: { env: null, keep: null, region: null, tier: null, absent: null } }, NOW)
      expect(Option.map(emptied, (w) => w.metadata)).toEqual(Option.some({}))
      expect(Option.map(yield* repo.get(account, webhook.id), (w) => w.metadata)).toEqual(Option.some({}))
      // Odd keys and values survive the merge.
      const odd = yield* repo.update(account, webhook.id, { metadata: ODD }, NOW)
      expect(Option.map(odd, (w) => w.metadata)).toEqual(Option.some(ODD))
    }), timeout)

  it.effect("metadata: the proofs list keeps exact matches of every pair, within the account, with status and paging", () =>
    Effect.gen(function*() {
      const account = yield* freshAccount
      const other = yield* freshAccount
      const repo = yield* ProofsRepo
      const make = (metadata: Metadata) => proofRecord(account, { metadata })
      const a = yield* make({ order: "123", tier: "gold" })
      const b = yield* make({ order: "123", tier: "silver" })
      const c = yield* make({ order: "456", tier: "gold", "ns:key": "a \"quoted\" value" })
      const none = yield* make({})
      const d = yield* make({ order: "123", tier: "gold", extra: "x" })
      const foreign = yield* proofRecord(other, { metadata: { order: "123", tier: "gold" } })
      yield* repo.insertMany([a, b, c, none, d, foreign])
      const list = (metadata: Metadata, extra: { status?: "queued" | "completed"; limit?: number; startingAfter?: string } = {}) =>
        Effect.map(repo.list(account, { limit: extra.limit ?? 100, startingAfter: extra.startingAfter, status: extra.status, metadata }), (page) => ({
          ids: page.items.map((p) => p.id),
          total: page.total,
          has_more: page.has_more
        }))
      expect(yield* list({ order: "123" })).toEqual({ ids: [d.id, b.id, a.id], total: 3, has_more: false })
      expect((yield* list({ order: "123", tier: "gold" })).ids).toEqual([d.id, a.id])
      expect((yield* list({ tier: "gold" })).ids).toEqual([d.id, c.id, a.id])
      expect((yield* list({ "ns:key": "a \"quoted\" value" })).ids).toEqual([c.id])
      expect((yield* list({ order: "12" })).ids).toEqual([])
      expect((yield* list({ order: "123", tier: "bronze" })).ids).toEqual([])
      expect((yield* list({ missing: "123" })).ids).toEqual([])
      expect(yield* list({ order: "123" }, { limit: 2 })).toEqual({ ids: [d.id, b.id], total: 3, has_more: true })
      expect(yield* list({ order: "123" }, { limit: 2, startingAfter: b.id })).toEqual({ ids: [a.id], total: 3, has_more: false })
      expect((yield* list({ order: "123" }, { status: "queued" })).ids).toEqual([d.id, b.id, a.id])
      // A canceled proof keeps its metadata, and the filter follows its status.
      yield* repo.cancel(account, { proof: a.id }, { canceled_at: T0, expires_at: completion.expires_at })
      expect((yield* list({ order: "123" }, { status: "queued" })).ids).toEqual([d.id, b.id])
      expect(Option.map(yield* repo.get(account, a.id), (p) => [p.status, p.metadata])).toEqual(Option.some(["canceled", a.metadata]))
      // Without a filter, every proof of the account.
      expect((yield* repo.list(account, { limit: 100 })).total).toBe(5)
    }), timeout)
}
