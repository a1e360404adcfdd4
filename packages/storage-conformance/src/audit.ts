import { expect } from "@effect/vitest"
import { type AccountId, type AuditEntryRecord, AuditRepo, makeId, type Timestamp } from "@mzk/core"
import { Effect } from "effect"
import type { ConformanceIt } from "./env.js"
import { freshAccount } from "./fixtures.js"

/** Long before any clock a test runs on (TestClock starts at 1970), so retention here deletes only these. */
const day = (n: number) => `1950-01-0${n}T00:00:00.000Z` as Timestamp

const entry = (accountId: AccountId, overrides: Partial<AuditEntryRecord> = {}) =>
  Effect.map(makeId("audit"), (id): AuditEntryRecord => ({
    id,
    account_id: accountId,
    action: "webhook.updated",
    actor: { type: "api_key", id: "key_01m8a14j5reyhgge7tpk1ryevg" },
    target: { type: "webhook", id: "wh_01m8a14j5reyhgge7tpk1ryevg", name: null },
    request_id: "req_01m8a14j5reyhgge7tpk1ryevg",
    ip_address: "2001:db8::1",
    user_agent: "curl/8.5.0 \u00e9\u65e5",
    changes: [{ field: "events", from: ["proof.completed"], to: ["proof.completed", "proof.failed"] }, { field: "active", from: true, to: false }],
    // After the retention test's cutoff, so that test deletes only its own entries.
    created_at: "1960-01-01T00:00:00.000Z" as Timestamp,
    ...overrides
  }))

export const auditTests = (it: ConformanceIt, timeout: number) => {
  it.effect("audit: entries read back as written, newest first, paged, and only the account's own", () =>
    Effect.gen(function*() {
      const repo = yield* AuditRepo
      const account = yield* freshAccount
      const written: Array<AuditEntryRecord> = []
      for (let i = 0; i < 5; i++) written.push(yield* entry(account, i === 2 ? { changes: null, actor: { type: "cli", id: null }, request_id: null, ip_address: null, user_agent: null } : {}))
      for (const e of written) yield* repo.insert(e)
      yield* repo.insert(yield* entry(yield* freshAccount))
      const newest = [...written].reverse()
      const first = yield* repo.list(account, { limit: 2 })
      expect(first.items).toEqual(newest.slice(0, 2))
      expect([first.total, first.has_more]).toEqual([5, true])
      const rest = yield* repo.list(account, { limit: 10, startingAfter: newest[1]!.id })
      expect(rest.items).toEqual(newest.slice(2))
      expect(rest.has_more).toBe(false)
    }), timeout)

  it.effect("audit: a listing filters by action, target and actor, and counts what the filter keeps", () =>
    Effect.gen(function*() {
      const repo = yield* AuditRepo
      const account = yield* freshAccount
      const revoked = yield* entry(account, { action: "key.revoked", target: { type: "api_key", id: "key_01m8a14j5z1wn5qbfv25vqy8xk", name: "ci" } })
      const bySession = yield* entry(account, { actor: { type: "session", id: "user-42" } })
      const plain = yield* entry(account)
      for (const e of [revoked, bySession, plain]) yield* repo.insert(e)
      const ids = (page: { readonly items: ReadonlyArray<AuditEntryRecord> }) => page.items.map((e) => e.id)
      expect(ids(yield* repo.list(account, { limit: 10, action: "key.revoked" }))).toEqual([revoked.id])
      expect(ids(yield* repo.list(account, { limit: 10, target_id: "key_01m8a14j5z1wn5qbfv25vqy8xk" }))).toEqual([revoked.id])
      expect(ids(yield* repo.list(account, { limit: 10, actor_id: "user-42" }))).toEqual([bySession.id])
      const updates = yield* repo.list(account, { limit: 1, action: "webhook.updated" })
      expect(ids(updates)).toEqual([plain.id])
      expect([updates.total, updates.has_more]).toEqual([2, true])
      expect((yield* repo.list(account, { limit: 10, action: "circuit.created" })).total).toBe(0)
    }), timeout)

  it.effect("audit: retention deletes entries created before the cutoff, oldest first, at most the limit, of every account", () =>
    Effect.gen(function*() {
      const repo = yield* AuditRepo
      const account = yield* freshAccount
      const other = yield* freshAccount
      const old = [yield* entry(account, { created_at: day(1) }), yield* entry(other, { created_at: day(2) }), yield* entry(account, { created_at: day(3) })]
      const kept = yield* entry(account, { created_at: day(4) })
      for (const e of [...old, kept]) yield* repo.insert(e)
      expect(yield* repo.deleteBefore(day(4), 2)).toBe(2)
      expect((yield* repo.list(account, { limit: 10 })).items.map((e) => e.created_at)).toEqual([day(4), day(3)])
      expect((yield* repo.list(other, { limit: 10 })).total).toBe(0)
      expect(yield* repo.deleteBefore(day(4), 2)).toBe(1)
      expect(yield* repo.deleteBefore(day(4), 2)).toBe(0)
      expect((yield* repo.list(account, { limit: 10 })).items).toEqual([kept])
    }), timeout)
}
