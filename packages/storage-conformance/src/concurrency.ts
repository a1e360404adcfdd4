import { expect } from "@effect/vitest"
import { actingFor, ApiKeys, DEFAULT_LIMITS, RateLimits, WebhooksRepo } from "@mzk/core"
import { Effect, Either } from "effect"
import type { ConformanceIt } from "./env.js"
import { freshAccount, webhookRecord } from "./fixtures.js"

const tally = <A, E extends { readonly _tag: string }>(results: ReadonlyArray<Either.Either<A, E>>) => {
  const counts: Record<string, number> = {}
  for (const result of results) {
    const label = Either.isRight(result) ? "ok" : result.left._tag
    counts[label] = (counts[label] ?? 0) + 1
  }
  return counts
}

export const concurrencyTests = (it: ConformanceIt, timeout: number) => {
  it.effect("key limit race: 50 concurrent creates on one account leave exactly 10 active keys", () =>
    Effect.gen(function*() {
      const keys = yield* ApiKeys
      const account = yield* freshAccount
      const results = yield* Effect.all(
        Array.from({ length: 50 }, (_, i) => Effect.either(keys.create(account, { name: `race-${i}` }))),
        { concurrency: "unbounded" }
      )
      expect(tally(results)).toEqual({ ok: DEFAULT_LIMITS.maxActiveKeys, KeyLimitReached: 50 - DEFAULT_LIMITS.maxActiveKeys })
      expect((yield* keys.list(account)).total).toBe(DEFAULT_LIMITS.maxActiveKeys)
    }), timeout)

  it.effect("key roll race: 12 concurrent rolls of one key make exactly one successor", () =>
    Effect.gen(function*() {
      const keys = yield* ApiKeys
      const account = yield* freshAccount
      const key = yield* keys.create(account, { name: "rolled" })
      const results = yield* Effect.all(
        Array.from({ length: 12 }, () => Effect.either(keys.roll(account, key.api_key.id, { expires_in: 600 }))),
        { concurrency: "unbounded" }
      )
      expect(tally(results)).toEqual({ ok: 1, KeyAlreadyRolled: 11 })
      expect((yield* keys.list(account)).total).toBe(2)
    }), timeout)

  it.effect("webhook limit race: 30 concurrent inserts with room for 20 leave exactly 20", () =>
    Effect.gen(function*() {
      const repo = yield* WebhooksRepo
      const account = yield* freshAccount
      const rows = yield* Effect.all(Array.from({ length: 30 }, () => webhookRecord(account)))
      const results = yield* Effect.all(
        rows.map((row) => Effect.either(repo.insert(row, { maxPerAccount: 20 }))),
        { concurrency: "unbounded" }
      )
      expect(tally(results)).toEqual({ ok: 20, WebhookLimitReached: 10 })
      expect((yield* repo.list(account, { limit: 100 })).total).toBe(20)
    }), timeout)

  it.effect("rate-limit race: 200 concurrent proof requests on one key within a minute admit exactly 60", () =>
    Effect.gen(function*() {
      const keys = yield* ApiKeys
      const account = yield* freshAccount
      const created = yield* keys.create(account, { name: "burst" })
      const principal = yield* keys.authenticate(created.secret)
      const limiter = yield* RateLimits
      const results = yield* Effect.all(
        Array.from({ length: 200 }, () => Effect.either(actingFor(principal)(limiter.admitProofRequest(principal.account_id, { proofs: 1 })))),
        { concurrency: "unbounded" }
      )
      expect(tally(results)).toEqual({ ok: 60, RateLimitExceeded: 140 })
      // The daily quota was charged for the admitted requests only.
      const next = yield* Effect.flip(actingFor(principal)(limiter.admitProofRequest(principal.account_id, { proofs: 1 })))
      if (next._tag !== "RateLimitExceeded") return expect.fail(`expected a rate limit, got ${next._tag}`)
      expect(next.windows.find((w) => w.policy === "daily")?.remaining).toBe(DEFAULT_LIMITS.proofsPerDayPerAccount - 60)
    }), timeout)
}
