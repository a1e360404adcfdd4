import { describe, expect, it } from "@effect/vitest"
import {
  type AccountId,
  Accounts,
  ApiKeys,
  authenticate,
  CreateKeyInput,
  decodeInput,
  DeliveriesRepo,
  EventsRepo,
  hashApiKey,
  KeysRepo,
  SCOPES,
  SessionAuthenticator,
  type Timestamp,
  WebhooksRepo
} from "@mzk/core"
import { makeSqliteMemoryStore, SeededEntropy, testCore } from "@mzk/testkit"
import { Context, Effect, Layer, Option, Redacted, Ref, TestClock } from "effect"

/** Storage lists newest first; this file reads events in the order they happened. */
const oldestFirst = <A>(items: ReadonlyArray<A>): Array<A> => [...items].reverse()

/** The memory store with `findByHash` counted, to prove which paths never reach storage. */
class StorageReads extends Context.Tag("test/StorageReads")<StorageReads, Ref.Ref<number>>() {}
const CountingStore = Layer.effectContext(Effect.gen(function*() {
  const store = yield* makeSqliteMemoryStore
  const reads = yield* Ref.make(0)
  const keys = Context.get(store, KeysRepo)
  return store.pipe(
    Context.add(KeysRepo, { ...keys, findByHash: (hash) => Effect.zipRight(Ref.update(reads, (n) => n + 1), keys.findByHash(hash)) }),
    Context.add(StorageReads, reads)
  )
}))
const TestLayer = testCore(CountingStore).pipe(Layer.provideMerge(CountingStore))

/** A raw body as the HTTP layer receives it: decoded at the boundary, then given to the service. */
const decodeCreate = decodeInput(CreateKeyInput)

const setup = Effect.gen(function*() {
  const account = yield* (yield* Accounts).create({ name: "Acme" })
  return { account: account.id, keys: yield* ApiKeys }
})

const everythingStored = (account: AccountId) =>
  Effect.gen(function*() {
    const events = yield* (yield* EventsRepo).list(account, { limit: 100 })
    return JSON.stringify({ listing: yield* (yield* ApiKeys).list(account), events: events.items })
  })

describe("ApiKeys", () => {
  it.effect("create returns the raw key once; the listing shows the record without key or hash", () =>
    Effect.gen(function*() {
      const { account, keys } = yield* setup
      yield* TestClock.setTime(Date.UTC(2026, 10, 22, 9, 30))
      const created = yield* keys.create(account, { name: "ci-deploy", description: "GitHub Actions" })
      const raw = Redacted.value(created.secret)
      expect(raw).toMatch(/^mzk_[0-9A-Za-z]{49}$/)
      expect(created.api_key).toEqual({
        id: expect.stringMatching(/^key_/),
        name: "ci-deploy",
        description: "GitHub Actions",
        prefix: raw.slice(0, 10),
        scopes: [...SCOPES],
        created_at: "2026-11-22T09:30:00.000Z",
        last_used_at: null,
        expires_at: null,
        metadata: {}
      })
      const listing = yield* keys.list(account)
      expect(listing).toEqual({ keys: [created.api_key], total: 1, limit: 10 })
      expect(String(created.secret)).not.toContain(raw)
    }).pipe(Effect.provide(TestLayer)))

  it.effect("no listing, event or error ever contains a raw key or its hash", () =>
    Effect.gen(function*() {
      const { account, keys } = yield* setup
      const created = yield* keys.create(account, { name: "leak-check" })
      const raw = Redacted.value(created.secret)
      yield* keys.authenticate(created.secret)
      yield* keys.revoke(account, created.api_key.id)
      const errors = yield* Effect.all([
        Effect.flip(keys.authenticate(created.secret)),
        Effect.flip(keys.revoke(account, created.api_key.id)),
        Effect.flip(Effect.flatMap(decodeCreate({ name: raw.slice(0, 70) }), (input) => keys.create(account, input)))
      ])
      const seen = (yield* everythingStored(account)) + JSON.stringify(errors) + errors.map(String).join()
      expect(seen).toContain("key.revoked")
      expect(seen).not.toContain(raw)
      expect(seen).not.toContain(raw.slice(4, 20))
      expect(seen).not.toContain(hashApiKey(raw))
    }).pipe(Effect.provide(TestLayer)))

  it.effect("the 11th active key is refused with key_limit_reached; a revoked one frees a place", () =>
    Effect.gen(function*() {
      const { account, keys } = yield* setup
      const made = []
      for (let i = 1; i <= 10; i++) made.push(yield* keys.create(account, { name: `key-${i}` }))
      const refused = yield* Effect.flip(keys.create(account, { name: "key-11" }))
      expect(refused._tag).toBe("KeyLimitReached")
      expect((yield* keys.list(account)).total).toBe(10)
      yield* keys.revoke(account, made[0]!.api_key.id)
      yield* keys.create(account, { name: "key-11" })
      expect((yield* keys.list(account)).keys.map((k) => k.name)).toEqual(["key-11", ...made.slice(1).map((k) => k.api_key.name).reverse()])
    }).pipe(Effect.provide(TestLayer)))

  it.effect("names are validated: required, at most 64 letters, digits and hyphens; unknown fields refused", () =>
    Effect.gen(function*() {
      const { account, keys } = yield* setup
      const codes = []
      for (const body of [{}, { name: "" }, { name: "a".repeat(65) }, { name: "has space" }, { name: "ok", extra: 1 }, null, "x"]) {
        const error = yield* Effect.flip(Effect.flatMap(decodeCreate(body), (input) => keys.create(account, input)))
        expect(error._tag).toBe("InvalidRequest")
        if (error._tag === "InvalidRequest") codes.push(error.details?.[0]?.path)
      }
      expect(codes.slice(0, 5)).toEqual(["name", "name", "name", "name", "extra"])
      yield* keys.create(account, { name: "a".repeat(64) })
      yield* keys.create(account, { name: "Prod-Deploy-2" })
      expect((yield* keys.list(account)).total).toBe(2)
    }).pipe(Effect.provide(TestLayer)))

  it.effect("revoked keys fail authentication with invalid_api_key, for good; key.revoked is recorded", () =>
    Effect.gen(function*() {
      const { account, keys } = yield* setup
      const created = yield* keys.create(account, { name: "short-lived" })
      const principal = yield* keys.authenticate(created.secret)
      expect(principal).toEqual({ account_id: account, scopes: [...SCOPES], via: { kind: "api_key", key_id: created.api_key.id } })
      yield* keys.revoke(account, created.api_key.id)
      expect((yield* Effect.flip(keys.authenticate(created.secret)))._tag).toBe("InvalidApiKey")
      expect((yield* Effect.flip(keys.revoke(account, created.api_key.id)))._tag).toBe("KeyNotFound")
      expect((yield* keys.list(account)).total).toBe(0)
      const types = oldestFirst((yield* (yield* EventsRepo).list(account, { limit: 10 })).items).map((e) => [e.type, e.data])
      expect(types).toEqual([
        ["key.created", { id: created.api_key.id, name: "short-lived", description: null, scopes: [...SCOPES], created_at: created.api_key.created_at, metadata: {} }],
        ["key.revoked", { id: created.api_key.id, name: "short-lived", revoked_at: expect.any(String), metadata: {} }]
      ])
    }).pipe(Effect.provide(TestLayer)))

  it.effect("revoke: another account's key, an unknown id and a malformed id are all key_not_found", () =>
    Effect.gen(function*() {
      const { account, keys } = yield* setup
      const other = (yield* (yield* Accounts).create({ name: "Other" })).id
      const theirs = yield* keys.create(other, { name: "theirs" })
      for (const id of [theirs.api_key.id, "key_00000000000000000000000000", "nope", ""]) {
        expect((yield* Effect.flip(keys.revoke(account, id)))._tag).toBe("KeyNotFound")
      }
      yield* keys.authenticate(theirs.secret)
    }).pipe(Effect.provide(TestLayer)))

  it.effect("malformed keys and wrong checksums fail with invalid_api_key without reading storage", () =>
    Effect.gen(function*() {
      const { account, keys } = yield* setup
      const created = yield* keys.create(account, { name: "valid" })
      const raw = Redacted.value(created.secret)
      const last = raw.at(-1) === "a" ? "b" : "a"
      const reads = yield* StorageReads
      for (const bad of [raw.slice(0, -1) + last, raw.slice(0, 20), "", "Bearer " + raw, raw + "x", raw.replace("mzk_", "mzk-")]) {
        const error = yield* Effect.flip(keys.authenticate(Redacted.make(bad)))
        expect(error._tag).toBe("InvalidApiKey")
      }
      expect(yield* Ref.get(reads)).toBe(0)
      yield* keys.authenticate(created.secret)
      expect(yield* Ref.get(reads)).toBe(1)
    }).pipe(Effect.provide(TestLayer)))

  it.effect("last_used_at: null until first use, then written at most once a minute (TestClock)", () =>
    Effect.gen(function*() {
      const { account, keys } = yield* setup
      yield* TestClock.setTime(Date.UTC(2026, 0, 1, 12, 0, 0))
      const created = yield* keys.create(account, { name: "busy" })
      const lastUsed = Effect.map(keys.list(account), (l) => l.keys[0]!.last_used_at)
      expect(yield* lastUsed).toBeNull()
      yield* keys.authenticate(created.secret)
      expect(yield* lastUsed).toBe("2026-01-01T12:00:00.000Z")
      yield* TestClock.adjust("59999 millis")
      yield* keys.authenticate(created.secret)
      expect(yield* lastUsed).toBe("2026-01-01T12:00:00.000Z")
      yield* TestClock.adjust("1 millis")
      yield* keys.authenticate(created.secret)
      expect(yield* lastUsed).toBe("2026-01-01T12:01:00.000Z")
      yield* TestClock.adjust("30 seconds")
      yield* Effect.all(Array.from({ length: 20 }, () => keys.authenticate(created.secret)), { concurrency: "unbounded" })
      expect(yield* lastUsed).toBe("2026-01-01T12:01:00.000Z")
      yield* TestClock.adjust("10 minutes")
      yield* keys.authenticate(created.secret)
      expect(yield* lastUsed).toBe("2026-01-01T12:11:30.000Z")
    }).pipe(Effect.provide(TestLayer)))

  it.effect("scopes: default all; a key cannot grant scopes it lacks", () =>
    Effect.gen(function*() {
      const { account, keys } = yield* setup
      const narrow = yield* keys.create(account, { name: "narrow", scopes: ["keys:write", "keys:read", "keys:read"] })
      expect(narrow.api_key.scopes).toEqual(["keys:read", "keys:write"])
      const principal = yield* keys.authenticate(narrow.secret)
      const refused = yield* Effect.flip(keys.create(account, { name: "wider", scopes: ["proofs:write"] }, principal.scopes))
      expect(refused._tag).toBe("InsufficientScope")
      expect(refused.message).toContain("proofs:write")
      const defaulted = yield* Effect.flip(keys.create(account, { name: "all" }, principal.scopes))
      expect(defaulted._tag).toBe("InsufficientScope")
      const ok = yield* keys.create(account, { name: "same", scopes: ["keys:read"] }, principal.scopes)
      expect(ok.api_key.scopes).toEqual(["keys:read"])
      for (const body of [{ name: "none", scopes: [] }, { name: "bad", scopes: ["admin"] }]) {
        expect((yield* Effect.flip(Effect.flatMap(decodeCreate(body), (input) => keys.create(account, input))))._tag).toBe("InvalidRequest")
      }
    }).pipe(Effect.provide(TestLayer)))

  it.effect("key events fan out to active webhooks subscribed to the type, in the same transaction", () =>
    Effect.gen(function*() {
      const { account, keys } = yield* setup
      const webhooks = yield* WebhooksRepo
      const at = "2026-01-01T00:00:00.000Z" as Timestamp
      const base = { account_id: account, description: null, disabled_reason: null, secret: "whsec_x", previous_secret: null, previous_secret_expires_at: null, created_at: at, updated_at: at, metadata: {} } as const
      yield* webhooks.insert({ ...base, id: "wh_00000000000000000000000001" as never, url: "https://a.example.com", events: ["key.created"], active: true }, { maxPerAccount: 20 })
      yield* webhooks.insert({ ...base, id: "wh_00000000000000000000000002" as never, url: "https://b.example.com", events: ["key.created"], active: false }, { maxPerAccount: 20 })
      yield* webhooks.insert({ ...base, id: "wh_00000000000000000000000003" as never, url: "https://c.example.com", events: ["key.revoked"], active: true }, { maxPerAccount: 20 })
      yield* keys.create(account, { name: "fanned" })
      const [event] = oldestFirst((yield* (yield* EventsRepo).list(account, { limit: 10 })).items)
      const deliveries = yield* (yield* DeliveriesRepo).listByEvent(event!.id)
      expect(deliveries.map((d) => [d.webhook_id, d.status, d.next_attempt_at === event!.created_at])).toEqual([
        ["wh_00000000000000000000000001", "pending", true]
      ])
    }).pipe(Effect.provide(TestLayer)))
})

describe("authenticate (bearer tokens)", () => {
  const sessions = Layer.succeed(SessionAuthenticator, {
    authenticate: (token) =>
      Effect.succeed(Redacted.value(token) === "session-token-1"
        ? Option.some({ account_id: "acct_00000000000000000000000009" as AccountId, scopes: ["proofs:read" as const] })
        : Option.none())
  })

  it.effect("keys go to ApiKeys, other tokens to the SessionAuthenticator, nothing else passes", () =>
    Effect.gen(function*() {
      const { account, keys } = yield* setup
      const created = yield* keys.create(account, { name: "bearer" })
      expect((yield* authenticate(created.secret)).via.kind).toBe("api_key")
      expect(yield* authenticate(Redacted.make("session-token-1"))).toEqual({
        account_id: "acct_00000000000000000000000009",
        scopes: ["proofs:read"],
        via: { kind: "session" }
      })
      for (const token of ["", "session-token-2", "mzk_nope"]) {
        expect((yield* Effect.flip(authenticate(Redacted.make(token))))._tag).toBe("InvalidApiKey")
      }
    }).pipe(Effect.provide(sessions), Effect.provide(TestLayer)))

  it.effect("without a session authenticator only API keys work", () =>
    Effect.gen(function*() {
      expect((yield* Effect.flip(authenticate(Redacted.make("session-token-1"))))._tag).toBe("InvalidApiKey")
    }).pipe(Effect.provide(TestLayer)))
})

// Keep the seeded entropy honest: two cores with the same seed make the same ids.
describe("testkit determinism", () => {
  it.effect("the same seed gives the same key ids", () =>
    Effect.gen(function*() {
      const run = Effect.gen(function*() {
        const { account, keys } = yield* setup
        return [account, (yield* keys.create(account, { name: "same" })).api_key.id]
      })
      const a = yield* run.pipe(Effect.provide(testCore(undefined, { seed: 7 })))
      const b = yield* run.pipe(Effect.provide(testCore(undefined, { seed: 7 })))
      const c = yield* run.pipe(Effect.provide(testCore(undefined, { seed: 8 })))
      expect(a).toEqual(b)
      expect(a).not.toEqual(c)
    }).pipe(Effect.provide(SeededEntropy(0))))
})
