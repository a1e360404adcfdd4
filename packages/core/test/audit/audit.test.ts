import { describe, expect, it } from "@effect/vitest"
import {
  type AccountId,
  Accounts,
  actorOf,
  ApiKeys,
  AuditConfig,
  auditedAs,
  AuditLog,
  AuditRetentionSweeper,
  authenticate,
  Circuits,
  CLI_ACTOR,
  SessionAuthenticator,
  Webhooks,
  withRequestContext
} from "@mzk/core"
import { testCore } from "@mzk/testkit"
import { Effect, Layer, Option, Redacted, TestClock } from "effect"

const DAY = 86_400_000
const HOOK = "https://hooks.example.com/mzk"

const newAccount = Effect.map(Effect.flatMap(Accounts, (a) => a.create({ name: "Acme" })), (a) => a.id)

/** An API request's context, as the dispatcher provides it. */
const asRequest = (keyId: string) =>
  withRequestContext({
    actor: { type: "api_key", id: keyId },
    request_id: "req_01m8a14j5reyhgge7tpk1ryevg",
    client_address: "203.0.113.7",
    user_agent: "ci/1.0",
    idempotency_key: null
  })

const auditLog = (account: AccountId, query: Parameters<AuditLog["Type"]["list"]>[1] = {}) =>
  Effect.flatMap(AuditLog, (audit) => audit.list(account, query))

const CIRCUIT = {
  kind: "circom" as const,
  main: "main.circom",
  files: { "main.circom": new TextEncoder().encode("pragma circom 2.1.0;\ntemplate T() { signal input a; }\ncomponent main = T();\n") }
}

describe("the audit log", () => {
  it.effect("records key changes in the request's name: created (with what it was created with), rolled, revoked", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.UTC(2026, 10, 25, 9, 0))
      const account = yield* newAccount
      const keys = yield* ApiKeys
      const created = yield* keys.create(account, { name: "ci", scopes: ["proofs:write"] }).pipe(asRequest("key_01m8a14j5z1wn5qbfv25vqy8xk"))
      yield* TestClock.adjust(1000)
      const rolled = yield* keys.roll(account, created.api_key.id, { expires_in: 3600 }).pipe(asRequest("key_01m8a14j5z1wn5qbfv25vqy8xk"))
      yield* TestClock.adjust(1000)
      yield* keys.revoke(account, rolled.api_key.id).pipe(asRequest("key_01m8a14j5z1wn5qbfv25vqy8xk"))

      const { entries, has_more, total } = yield* auditLog(account)
      expect([total, has_more]).toEqual([4, false])
      // Newest first.
      expect(entries.map((e) => [e.action, e.target.id])).toEqual([
        ["key.revoked", rolled.api_key.id],
        ["key.created", rolled.api_key.id],
        ["key.rolled", created.api_key.id],
        ["key.created", created.api_key.id]
      ])
      for (const entry of entries) {
        expect(entry).toMatchObject({
          actor: { type: "api_key", id: "key_01m8a14j5z1wn5qbfv25vqy8xk" },
          target: { type: "api_key", name: "ci" },
          request_id: "req_01m8a14j5reyhgge7tpk1ryevg",
          ip_address: "203.0.113.7",
          user_agent: "ci/1.0"
        })
        expect(entry.id).toMatch(/^aud_/)
      }
      expect(entries[3]!.changes).toEqual([
        { field: "name", from: null, to: "ci" },
        { field: "description", from: null, to: null },
        { field: "scopes", from: null, to: ["proofs:write"] },
        { field: "expires_at", from: null, to: null }
      ])
      expect(entries[3]!.created_at).toBe("2026-11-25T09:00:00.000Z")
      expect(entries[2]!.changes).toEqual([
        { field: "expires_at", from: null, to: "2026-11-25T10:00:01.000Z" },
        { field: "replaced_by", from: null, to: rolled.api_key.id }
      ])
      expect(entries[0]!.changes).toBeNull()
      // Never the raw key or its hash.
      const text = JSON.stringify(entries)
      expect(text).not.toContain(Redacted.value(created.secret))
      expect(text).not.toContain(Redacted.value(rolled.secret))
      expect(text).not.toContain("mzk_")
    }).pipe(Effect.provide(testCore())))

  it.effect("records webhook changes with the fields that changed; an update that changes nothing is no change; never the secret", () =>
    Effect.gen(function*() {
      const account = yield* newAccount
      const webhooks = yield* Webhooks
      const as = asRequest("key_01m8a14j5z1wn5qbfv25vqy8xk")
      const created = yield* webhooks.create(account, { url: HOOK, events: ["proof.completed"] }).pipe(as)
      const id = created.webhook.id
      yield* webhooks.update(account, id, { events: ["proof.completed", "proof.failed"], active: false }).pipe(as)
      yield* webhooks.update(account, id, { events: ["proof.completed", "proof.failed"] }).pipe(as)
      yield* webhooks.remove(account, id).pipe(as)

      const { entries } = yield* auditLog(account)
      expect(entries.map((e) => e.action)).toEqual(["webhook.deleted", "webhook.updated", "webhook.created"])
      expect(entries.every((e) => e.target.type === "webhook" && e.target.id === id)).toBe(true)
      expect(entries[2]!.changes).toEqual([
        { field: "url", from: null, to: HOOK },
        { field: "events", from: null, to: ["proof.completed"] },
        { field: "description", from: null, to: null },
        { field: "active", from: null, to: true },
        { field: "disabled_reason", from: null, to: null }
      ])
      expect(entries[1]!.changes).toEqual([
        { field: "events", from: ["proof.completed"], to: ["proof.completed", "proof.failed"] },
        { field: "active", from: true, to: false }
      ])
      expect(JSON.stringify(entries)).not.toContain(Redacted.value(created.secret))
      expect(JSON.stringify(entries)).not.toContain("whsec_")
    }).pipe(Effect.provide(testCore())))

  it.effect("records circuits uploaded and removed", () =>
    Effect.gen(function*() {
      const account = yield* newAccount
      const circuits = yield* Circuits
      const uploaded = yield* circuits.create(account, { name: "squares", source: CIRCUIT }).pipe(auditedAs(CLI_ACTOR))
      yield* circuits.remove(account, "squares").pipe(auditedAs(CLI_ACTOR))
      const { entries } = yield* auditLog(account)
      expect(entries.map((e) => [e.action, e.actor, e.target])).toEqual([
        ["circuit.removed", CLI_ACTOR, { type: "circuit", id: uploaded.id, name: "squares" }],
        ["circuit.created", CLI_ACTOR, { type: "circuit", id: uploaded.id, name: "squares" }]
      ])
    }).pipe(Effect.provide(testCore())))

  it.effect("a refused change leaves no entry: it is written in the change's own transaction", () =>
    Effect.gen(function*() {
      const account = yield* newAccount
      const keys = yield* ApiKeys
      for (let i = 0; i < 10; i++) yield* keys.create(account, { name: `k${i}` })
      const refused = yield* Effect.flip(keys.create(account, { name: "eleventh" }))
      expect(refused._tag).toBe("KeyLimitReached")
      expect((yield* keys.revoke(account, "key_01m8a14j5z1wn5qbfv25vqy8xk").pipe(Effect.flip))._tag).toBe("KeyNotFound")
      const circuits = yield* Circuits
      expect((yield* Effect.flip(circuits.remove(account, "nothing-here")))._tag).toBe("CircuitNotFound")
      const { entries, total } = yield* auditLog(account)
      expect(total).toBe(10)
      expect(new Set(entries.map((e) => e.action))).toEqual(new Set(["key.created"]))
    }).pipe(Effect.provide(testCore())))

  it.effect("outside a request the actor is mzk itself (system), unless the caller says who (the CLI)", () =>
    Effect.gen(function*() {
      const account = yield* newAccount
      const keys = yield* ApiKeys
      yield* keys.create(account, { name: "from-code" })
      yield* keys.create(account, { name: "from-cli" }).pipe(auditedAs(CLI_ACTOR))
      const { entries } = yield* auditLog(account)
      expect(entries.map((e) => [e.target.name, e.actor, e.request_id, e.ip_address])).toEqual([
        ["from-cli", { type: "cli", id: null }, null, null],
        ["from-code", { type: "system", id: null }, null, null]
      ])
    }).pipe(Effect.provide(testCore())))

  it.effect("filters by action, target and actor, and pages on to older entries", () =>
    Effect.gen(function*() {
      const account = yield* newAccount
      const keys = yield* ApiKeys
      const made = []
      for (let i = 0; i < 5; i++) made.push(yield* keys.create(account, { name: `k${i}` }).pipe(asRequest(i === 4 ? "key_01m8a14j5z1wn5qbfv25vqy8xk" : "key_01m8a14j5reyhgge7tpk1ryevg")))
      yield* keys.revoke(account, made[0]!.api_key.id)
      const first = yield* auditLog(account, { limit: 2 })
      expect(first.entries.map((e) => e.action)).toEqual(["key.revoked", "key.created"])
      expect([first.total, first.has_more]).toEqual([6, true])
      const next = yield* auditLog(account, { limit: 2, starting_after: first.entries[1]!.id })
      expect(next.entries.map((e) => e.target.name)).toEqual(["k3", "k2"])
      expect((yield* auditLog(account, { action: "key.revoked" })).entries.map((e) => e.target.id)).toEqual([made[0]!.api_key.id])
      expect((yield* auditLog(account, { target_id: made[0]!.api_key.id })).entries.map((e) => e.action)).toEqual(["key.revoked", "key.created"])
      expect((yield* auditLog(account, { actor_id: "key_01m8a14j5z1wn5qbfv25vqy8xk" })).entries.map((e) => e.target.name)).toEqual(["k4"])
      // Another account sees none of it.
      expect((yield* auditLog(yield* newAccount, { target_id: made[0]!.api_key.id })).total).toBe(0)
    }).pipe(Effect.provide(testCore())))

  it.effect("a session's actor is the id its authenticator gave, or null", () =>
    Effect.gen(function*() {
      const account = yield* newAccount
      const sessions = Layer.succeed(SessionAuthenticator, {
        authenticate: (token) =>
          Effect.succeed(
            Redacted.value(token) === "sess-alice"
              ? Option.some({ account_id: account, actor_id: "user_alice" })
              : Option.some({ account_id: account })
          )
      })
      const alice = yield* authenticate(Redacted.make("sess-alice")).pipe(Effect.provide(sessions))
      const anonymous = yield* authenticate(Redacted.make("sess-other")).pipe(Effect.provide(sessions))
      expect(actorOf(alice)).toEqual({ type: "session", id: "user_alice" })
      expect(actorOf(anonymous)).toEqual({ type: "session", id: null })
    }).pipe(Effect.provide(testCore())))
})

describe("audit retention", () => {
  it.effect("entries older than the retention are deleted by the sweeper; younger ones stay", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.UTC(2026, 0, 1))
      const account = yield* newAccount
      const keys = yield* ApiKeys
      yield* keys.create(account, { name: "old" })
      yield* TestClock.adjust(5 * DAY)
      yield* keys.create(account, { name: "young" })
      const names = Effect.map(auditLog(account), (page) => page.entries.map((e) => e.target.name))
      yield* Effect.scoped(Effect.gen(function*() {
        yield* Layer.buildWithScope(AuditRetentionSweeper, yield* Effect.scope)
        yield* TestClock.adjust(0)
        expect(yield* names).toEqual(["young", "old"])
        // Day 10 plus the sweep interval: the first entry is past retention, the second is not.
        yield* TestClock.adjust(5 * DAY + 3_600_000)
        expect(yield* names).toEqual(["young"])
        yield* TestClock.adjust(5 * DAY)
        expect(yield* names).toEqual([])
      }))
    }).pipe(Effect.provide(testCore()), Effect.provideService(AuditConfig, { retentionMs: 10 * DAY, sweepIntervalMs: 3_600_000 })))
})
