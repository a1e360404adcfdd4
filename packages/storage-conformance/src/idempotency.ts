import { expect } from "@effect/vitest"
import { type AccountId, type IdempotencyRecord, IdempotencyRepo, type Timestamp } from "@mzk/core"
import { Effect, Option } from "effect"
import type { ConformanceIt } from "./env.js"
import { freshAccount } from "./fixtures.js"

const T0 = "2030-01-01T00:00:00.000Z" as Timestamp
const T1 = "2030-01-01T00:05:00.000Z" as Timestamp
const T2 = "2030-01-02T00:00:00.000Z" as Timestamp
const T3 = "2030-01-03T00:00:00.000Z" as Timestamp

let requests = 0

const inFlight = (accountId: AccountId, key: string, overrides: Partial<IdempotencyRecord> = {}): IdempotencyRecord => ({
  account_id: accountId,
  key,
  fingerprint: "f1",
  request_id: `req_${++requests}`,
  response: null,
  created_at: T0,
  expires_at: T2,
  locked_until: T1,
  ...overrides
})

const response = { status: 201, headers: { "content-type": "application/json" }, body: "{\"id\":\"key_1\"}" }

export const idempotencyTests = (it: ConformanceIt, timeout: number) => {
  it.effect("idempotency: the first claim takes the key; later ones see it in flight, then settled", () =>
    Effect.gen(function*() {
      const repo = yield* IdempotencyRepo
      const account = yield* freshAccount
      const first = inFlight(account, "retry-me")
      expect(yield* repo.claim(first, T0)).toEqual(Option.none())
      expect(yield* repo.claim(inFlight(account, "retry-me"), T0)).toEqual(Option.some(first))
      // Another account's key of the same text is its own.
      expect(yield* repo.claim(inFlight(yield* freshAccount, "retry-me"), T0)).toEqual(Option.none())
      expect(yield* repo.settle(account, "retry-me", "req_other", response)).toBe(false)
      expect(yield* repo.settle(account, "retry-me", first.request_id, response)).toBe(true)
      expect(yield* repo.settle(account, "retry-me", first.request_id, response)).toBe(false)
      expect(yield* repo.claim(inFlight(account, "retry-me"), T0)).toEqual(Option.some({ ...first, response, locked_until: null }))
      // A settled key is kept past its lock, until it expires.
      expect(Option.isSome(yield* repo.claim(inFlight(account, "retry-me"), T1))).toBe(true)
      const later = inFlight(account, "retry-me", { fingerprint: "f2", created_at: T2, expires_at: T3, locked_until: T3 })
      expect(yield* repo.claim(later, T2)).toEqual(Option.none())
      expect(yield* repo.claim(inFlight(account, "retry-me"), T2)).toEqual(Option.some(later))
    }), timeout)

  it.effect("idempotency: an in-flight key is taken over once its lock lapses; release frees it for its own request only", () =>
    Effect.gen(function*() {
      const repo = yield* IdempotencyRepo
      const account = yield* freshAccount
      const dead = inFlight(account, "k")
      yield* repo.claim(dead, T0)
      const next = inFlight(account, "k")
      expect(yield* repo.claim(next, T1)).toEqual(Option.none())
      // The dead request's late answer is not kept: the key is the new request's.
      expect(yield* repo.settle(account, "k", dead.request_id, response)).toBe(false)
      expect(yield* repo.release(account, "k", dead.request_id)).toBe(false)
      expect(yield* repo.release(account, "k", next.request_id)).toBe(true)
      expect(yield* repo.claim(inFlight(account, "k"), T0)).toEqual(Option.none())
    }), timeout)

  it.effect("idempotency: deleteExpired deletes what expired by then and nothing else", () =>
    Effect.gen(function*() {
      const repo = yield* IdempotencyRepo
      const account = yield* freshAccount
      yield* repo.claim(inFlight(account, "old", { expires_at: T1 }), T0)
      const kept = inFlight(account, "new")
      yield* repo.claim(kept, T0)
      expect(yield* repo.deleteExpired(T1)).toBeGreaterThanOrEqual(1)
      expect(yield* repo.claim(inFlight(account, "new"), T0)).toEqual(Option.some(kept))
      expect(yield* repo.claim(inFlight(account, "old"), T0)).toEqual(Option.none())
    }), timeout)

  it.effect("idempotency race: of 30 concurrent claims of one key exactly one takes it, and all others see that one", () =>
    Effect.gen(function*() {
      const repo = yield* IdempotencyRepo
      const account = yield* freshAccount
      const claims = Array.from({ length: 30 }, () => inFlight(account, "race"))
      const results = yield* Effect.all(claims.map((claim) => repo.claim(claim, T0)), { concurrency: "unbounded" })
      const winners = claims.filter((_, i) => Option.isNone(results[i]!))
      expect(winners).toHaveLength(1)
      for (const result of results) if (Option.isSome(result)) expect(result.value.request_id).toBe(winners[0]!.request_id)
    }), timeout)
}
