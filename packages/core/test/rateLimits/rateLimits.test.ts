import { describe, expect, it } from "@effect/vitest"
import { Accounts, actingFor, ApiKeys, metered, type Principal, RateLimits } from "@mzk/core"
import { testCore } from "@mzk/testkit"
import { Effect, Either, TestClock } from "effect"

const keyPrincipal = (name = "metered") =>
  Effect.gen(function*() {
    const account = yield* (yield* Accounts).create({ name: "Acme" })
    const keys = yield* ApiKeys
    return yield* keys.authenticate((yield* keys.create(account.id, { name })).secret)
  })

const admitMany = (principal: Principal, n: number, proofs = 1) =>
  Effect.gen(function*() {
    const limiter = yield* RateLimits
    let admitted = 0
    for (let i = 0; i < n; i++) {
      if (Either.isRight(yield* Effect.either(actingFor(principal)(limiter.admitProofRequest(principal.account_id, { proofs }))))) admitted++
    }
    return admitted
  })

describe("RateLimits", () => {
  it.effect("60 proof requests per key per minute; the next minute opens a fresh window (TestClock)", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.UTC(2026, 10, 22, 10, 0, 15))
      const principal = yield* keyPrincipal()
      const limiter = yield* RateLimits
      const first = yield* actingFor(principal)(limiter.admitProofRequest(principal.account_id, { proofs: 1 }))
      expect(first).toEqual([
        { policy: "key", limit: 60, remaining: 59, window_seconds: 60, reset_seconds: 45 },
        { policy: "daily", limit: 5000, remaining: 4999, window_seconds: 86400, reset_seconds: 50385 }
      ])
      expect(yield* admitMany(principal, 70)).toBe(59)
      yield* TestClock.adjust("30 seconds")
      const refused = yield* Effect.flip(actingFor(principal)(limiter.admitProofRequest(principal.account_id, { proofs: 1 })))
      expect(refused).toMatchObject({ _tag: "RateLimitExceeded", policy: "key", retry_after_seconds: 15 })
      expect(refused.message).toContain("60 proof requests a minute")
      yield* TestClock.adjust("14999 millis")
      expect(yield* admitMany(principal, 1)).toBe(0)
      yield* TestClock.adjust("1 millis")
      expect(yield* admitMany(principal, 61)).toBe(60)
    }).pipe(Effect.provide(testCore())))

  it.effect("each key has its own minute budget; the account's daily quota is shared", () =>
    Effect.gen(function*() {
      const a = yield* keyPrincipal("a")
      const keys = yield* ApiKeys
      const b = yield* keys.authenticate((yield* keys.create(a.account_id, { name: "b" })).secret)
      expect(yield* admitMany(a, 60)).toBe(60)
      expect(yield* admitMany(b, 60)).toBe(60)
      const windows = yield* actingFor(a)((yield* RateLimits).admitProofRequest(a.account_id, { proofs: 0 })).pipe(Effect.flip)
      expect(windows._tag).toBe("RateLimitExceeded")
      const next = yield* (yield* RateLimits).admitProofRequest(b.account_id, { proofs: 0 })
      expect(next).toEqual([{ policy: "daily", limit: 5000, remaining: 4880, window_seconds: 86400, reset_seconds: 86400 }])
    }).pipe(Effect.provide(testCore())))

  it.effect("the key charged is the request's actor: none outside a request; `metered` returns the windows charged", () =>
    Effect.gen(function*() {
      const principal = yield* keyPrincipal()
      const limiter = yield* RateLimits
      // An embedder's own call (system) has no key: only the account's day is charged.
      const asSystem = yield* metered(limiter.admitProofRequest(principal.account_id, { proofs: 1 }))
      expect(asSystem.rate_limits.map((w) => [w.policy, w.remaining])).toEqual([["daily", 4999]])
      const asKey = yield* metered(actingFor(principal)(limiter.admitProofRequest(principal.account_id, { proofs: 1 })))
      expect(asKey.rate_limits.map((w) => [w.policy, w.remaining])).toEqual([["key", 59], ["daily", 4998]])
      // A slot is per `metered`: work that charged nothing reports nothing, not an earlier request's windows.
      expect((yield* metered(Effect.succeed("free"))).rate_limits).toEqual([])
    }).pipe(Effect.provide(testCore())))

  it.effect("5,000 proofs per account per UTC day, rolling over at UTC midnight (TestClock)", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.UTC(2026, 10, 22, 23, 0, 0))
      const principal = yield* keyPrincipal()
      const limiter = yield* RateLimits
      // 49 batches of 100 across 49 minutes use 4,900 of the day.
      for (let i = 0; i < 49; i++) {
        yield* actingFor(principal)(limiter.admitProofRequest(principal.account_id, { proofs: 100 }))
        yield* TestClock.adjust("1 minute")
      }
      const partial = yield* Effect.flip(actingFor(principal)(limiter.admitProofRequest(principal.account_id, { proofs: 101 })))
      expect(partial).toMatchObject({ _tag: "RateLimitExceeded", policy: "daily", retry_after_seconds: 660 })
      expect(partial.message).toContain("100 left, 101 requested")
      // The refused batch cost nothing, not even the key's request.
      const fits = yield* actingFor(principal)(limiter.admitProofRequest(principal.account_id, { proofs: 100 }))
      expect(fits.map((w) => w.remaining)).toEqual([59, 0])
      expect(yield* Effect.flip(actingFor(principal)(limiter.admitProofRequest(principal.account_id, { proofs: 1 })))).toMatchObject({ policy: "daily" })
      yield* TestClock.setTime(Date.UTC(2026, 10, 22, 23, 59, 59, 999))
      expect(yield* Effect.flip(actingFor(principal)(limiter.admitProofRequest(principal.account_id, { proofs: 1 })))).toMatchObject({ retry_after_seconds: 1 })
      yield* TestClock.adjust("1 millis")
      const fresh = yield* actingFor(principal)(limiter.admitProofRequest(principal.account_id, { proofs: 1 }))
      expect(fresh[1]).toEqual({ policy: "daily", limit: 5000, remaining: 4999, window_seconds: 86400, reset_seconds: 86400 })
    }).pipe(Effect.provide(testCore())))
})
