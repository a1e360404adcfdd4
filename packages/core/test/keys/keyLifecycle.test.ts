import { describe, expect, it } from "@effect/vitest"
import { Accounts, ApiKeys, CreateKeyInput, decodeInput, EventsRepo, RollKeyInput, type Timestamp } from "@mzk/core"
import { testCore } from "@mzk/testkit"
import { Effect, Redacted, TestClock } from "effect"

/** Storage lists newest first; this file reads events in the order they happened. */
const oldestFirst = <A>(items: ReadonlyArray<A>): Array<A> => [...items].reverse()

const HOUR = 3_600_000
const START = Date.UTC(2026, 10, 23, 9, 0, 0)
const iso = (ms: number) => new Date(ms).toISOString() as Timestamp

const setup = Effect.gen(function*() {
  yield* TestClock.setTime(START)
  const account = yield* (yield* Accounts).create({ name: "Lifecycle" })
  return { account: account.id, keys: yield* ApiKeys }
})

const works = (raw: Redacted.Redacted<string>) =>
  Effect.flatMap(ApiKeys, (keys) => Effect.match(keys.authenticate(raw), { onFailure: (e) => e._tag, onSuccess: () => "ok" }))

const decodeCreate = decodeInput(CreateKeyInput)
const decodeRoll = decodeInput(RollKeyInput)

describe("key expiry and roll (TestClock)", () => {
  it.effect("a key with expires_at works until then, is listed with it, and afterwards is 401, unlisted and uncounted", () =>
    Effect.gen(function*() {
      const { account, keys } = yield* setup
      const input = yield* decodeCreate({ name: "temp", expires_at: iso(START + HOUR) })
      const temp = yield* keys.create(account, input)
      expect(temp.api_key.expires_at).toBe(iso(START + HOUR))
      expect((yield* keys.list(account)).keys.map((k) => [k.name, k.expires_at])).toEqual([["temp", iso(START + HOUR)]])
      yield* TestClock.adjust(HOUR - 1)
      expect(yield* works(temp.secret)).toBe("ok")
      yield* TestClock.adjust(1)
      expect(yield* works(temp.secret)).toBe("InvalidApiKey")
      expect((yield* keys.list(account)).total).toBe(0)
      expect((yield* Effect.flip(keys.revoke(account, temp.api_key.id)))._tag).toBe("KeyNotFound")
      for (let i = 0; i < 10; i++) yield* keys.create(account, { name: `k${i}` })
      expect((yield* keys.list(account)).total).toBe(10)
    }).pipe(Effect.provide(testCore())))

  it.effect("expires_at must be in the future", () =>
    Effect.gen(function*() {
      const { account, keys } = yield* setup
      const refused = yield* Effect.flip(keys.create(account, yield* decodeCreate({ name: "late", expires_at: iso(START) })))
      expect(refused).toMatchObject({ _tag: "InvalidRequest", details: [{ path: "expires_at" }] })
      const malformed = yield* Effect.flip(decodeCreate({ name: "late", expires_at: "tomorrow" }))
      expect(malformed.details?.[0]?.path).toBe("expires_at")
    }).pipe(Effect.provide(testCore())))

  it.effect("a roll gives a new key with the same name, description and scopes; the old one works for the overlap, then 401", () =>
    Effect.gen(function*() {
      const { account, keys } = yield* setup
      const old = yield* keys.create(account, { name: "ci", description: "pipeline", scopes: ["proofs:read", "proofs:write"] })
      yield* TestClock.adjust(1_000)
      const rolled = yield* keys.roll(account, old.api_key.id, yield* decodeRoll({ expires_in: 600 }))
      expect(rolled.api_key).toMatchObject({ name: "ci", description: "pipeline", scopes: ["proofs:read", "proofs:write"], expires_at: null })
      expect(rolled.api_key.id).not.toBe(old.api_key.id)
      expect(Redacted.value(rolled.secret)).not.toBe(Redacted.value(old.secret))
      const listed = (yield* keys.list(account)).keys
      expect(listed.map((k) => [k.id, k.expires_at])).toEqual([[rolled.api_key.id, null], [old.api_key.id, iso(START + 1_000 + 600_000)]])
      const events = oldestFirst((yield* (yield* EventsRepo).list(account, { limit: 100 })).items)
      expect(events.map((e) => e.type)).toContain("key.rolled")
      expect(events.find((e) => e.type === "key.rolled")!.data).toEqual({
        id: rolled.api_key.id, name: "ci", scopes: ["proofs:read", "proofs:write"], created_at: iso(START + 1_000),
        previous_key_id: old.api_key.id, previous_key_expires_at: iso(START + 1_000 + 600_000), metadata: {}
      })
      yield* TestClock.adjust(600_000 - 1)
      expect([yield* works(old.secret), yield* works(rolled.secret)]).toEqual(["ok", "ok"])
      yield* TestClock.adjust(1)
      expect([yield* works(old.secret), yield* works(rolled.secret)]).toEqual(["InvalidApiKey", "ok"])
      expect((yield* keys.list(account)).keys.map((k) => k.id)).toEqual([rolled.api_key.id])
      // An expired key cannot be rolled again.
      expect((yield* Effect.flip(keys.roll(account, old.api_key.id, {})))._tag).toBe("KeyNotFound")
    }).pipe(Effect.provide(testCore())))

  it.effect("the default overlap is 24 hours; a key is rolled once: again inside its overlap is refused and changes nothing", () =>
    Effect.gen(function*() {
      const { account, keys } = yield* setup
      const old = yield* keys.create(account, { name: "svc" })
      const first = yield* keys.roll(account, old.api_key.id, {})
      const listed = () => Effect.map(keys.list(account), (l) => Object.fromEntries(l.keys.map((k) => [k.id, k.expires_at])))
      expect((yield* listed())[old.api_key.id]).toBe(iso(START + 24 * HOUR))
      yield* TestClock.adjust(HOUR)
      for (const input of [{}, { expires_in: 60 }, { expires_in: 0 }]) {
        const refused = yield* Effect.flip(keys.roll(account, old.api_key.id, input))
        expect(refused._tag).toBe("KeyAlreadyRolled")
        expect(refused.message).toContain(first.api_key.id)
      }
      expect(yield* listed()).toEqual({ [old.api_key.id]: iso(START + 24 * HOUR), [first.api_key.id]: null })
      expect(yield* works(old.secret)).toBe("ok")
      // The first roll's key is rolled in turn: its own overlap starts now.
      const second = yield* keys.roll(account, first.api_key.id, { expires_in: 30 * 86_400 })
      expect((yield* listed())[first.api_key.id]).toBe(iso(START + HOUR + 30 * 86_400_000))
      // Once the old key has stopped, it is not found, as any key that does not work.
      yield* TestClock.adjust(23 * HOUR)
      expect((yield* Effect.flip(keys.roll(account, old.api_key.id, {})))._tag).toBe("KeyNotFound")
      expect(Object.keys(yield* listed())).toEqual([second.api_key.id, first.api_key.id])
    }).pipe(Effect.provide(testCore())))

  it.effect("a roll replaces the secret, not the term: the successor of an expiring key ends with it, unless the roll sets its end", () =>
    Effect.gen(function*() {
      const { account, keys } = yield* setup
      const temp = yield* keys.create(account, yield* decodeCreate({ name: "temp", expires_at: iso(START + 2 * HOUR) }))
      // The default overlap (24 h) is longer than the key has left: the old key keeps its own end.
      const next = yield* keys.roll(account, temp.api_key.id, yield* decodeRoll({}))
      expect(next.api_key.expires_at).toBe(iso(START + 2 * HOUR))
      const events = oldestFirst((yield* (yield* EventsRepo).list(account, { limit: 100 })).items)
      expect(events.find((e) => e.type === "key.rolled")!.data).toMatchObject({ previous_key_expires_at: iso(START + 2 * HOUR) })
      yield* TestClock.adjust(HOUR)
      const renewed = yield* keys.roll(account, next.api_key.id, yield* decodeRoll({ expires_in: 600, expires_at: iso(START + 48 * HOUR) }))
      expect(renewed.api_key.expires_at).toBe(iso(START + 48 * HOUR))
      const endless = yield* keys.roll(account, renewed.api_key.id, yield* decodeRoll({ expires_in: 0, expires_at: null }))
      expect(endless.api_key.expires_at).toBeNull()
      yield* TestClock.adjust(HOUR)
      expect([yield* works(temp.secret), yield* works(next.secret), yield* works(renewed.secret), yield* works(endless.secret)])
        .toEqual(["InvalidApiKey", "InvalidApiKey", "InvalidApiKey", "ok"])
      // A new end must be in the future; refused, the roll leaves the key as it was.
      const late = yield* Effect.flip(keys.roll(account, endless.api_key.id, yield* decodeRoll({ expires_at: iso(START + 2 * HOUR) })))
      expect(late).toMatchObject({ _tag: "InvalidRequest", details: [{ path: "expires_at" }] })
      expect((yield* keys.list(account)).keys.map((k) => [k.id, k.expires_at])).toEqual([[endless.api_key.id, null]])
    }).pipe(Effect.provide(testCore())))

  it.effect("a rolled key counts toward the 10 active keys until it stops working; an overlap of 0 frees its place at once", () =>
    Effect.gen(function*() {
      const { account, keys } = yield* setup
      const all = []
      for (let i = 0; i < 10; i++) all.push(yield* keys.create(account, { name: `k${i}` }))
      expect((yield* Effect.flip(keys.roll(account, all[0]!.api_key.id, {})))._tag).toBe("KeyLimitReached")
      // Refused whole: the old key keeps no expiry.
      expect((yield* keys.list(account)).keys.every((k) => k.expires_at === null)).toBe(true)
      const now = yield* keys.roll(account, all[0]!.api_key.id, { expires_in: 0 })
      expect(yield* works(all[0]!.secret)).toBe("InvalidApiKey")
      expect(yield* works(now.secret)).toBe("ok")
      expect((yield* keys.list(account)).total).toBe(10)
    }).pipe(Effect.provide(testCore())))

  it.effect("roll refuses unknown, revoked and other accounts' keys as not found, and an overlap out of range", () =>
    Effect.gen(function*() {
      const { account, keys } = yield* setup
      const other = (yield* (yield* Accounts).create({ name: "Other" })).id
      const theirs = yield* keys.create(other, { name: "theirs" })
      const mine = yield* keys.create(account, { name: "mine" })
      yield* keys.revoke(account, mine.api_key.id)
      for (const id of [theirs.api_key.id, mine.api_key.id, "key_01jd0000000000000000000000", "nope"]) {
        expect((yield* Effect.flip(keys.roll(account, id, {})))._tag, id).toBe("KeyNotFound")
      }
      expect(yield* works(theirs.secret)).toBe("ok")
      for (const expires_in of [-1, 30 * 86_400 + 1, 1.5]) {
        expect((yield* Effect.flip(decodeRoll({ expires_in }))).details?.[0]?.path).toBe("expires_in")
      }
    }).pipe(Effect.provide(testCore())))
})
