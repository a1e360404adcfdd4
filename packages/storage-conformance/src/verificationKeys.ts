import { expect } from "@effect/vitest"
import { type AccountId, makeId, ProofsRepo, type Timestamp, type VerificationKeyRecord, VerificationKeysRepo } from "@mzk/core"
import { Effect, Option } from "effect"
import type { ConformanceIt } from "./env.js"
import { freshAccount, ids } from "./fixtures.js"
import { claim, completion, isolate, queued, T0 } from "./proofs.js"

const keyRecord = (accountId: AccountId, overrides: Partial<VerificationKeyRecord> = {}) =>
  Effect.map(makeId("verificationKey"), (id): VerificationKeyRecord => ({
    id,
    account_id: accountId,
    name: "plonk \u00e9\u65e5",
    proving_system: "plonk",
    n_public: 2,
    // Nested JSON with big decimal strings, read back exactly as written.
    verification_key: { protocol: "plonk", curve: "bn128", nPublic: 2, X_2: [["1", "2"], ["3", "4"], ["1", "0"]], k1: "2", nested: { list: [1, null, true] } },
    created_at: "2030-01-01T00:00:00.000Z" as Timestamp,
    ...overrides
  }))

export const verificationKeyTests = (it: ConformanceIt, timeout: number) => {
  it.effect("verification keys: read back as written, paged newest first, only the account's own, deleted once", () =>
    Effect.gen(function*() {
      const repo = yield* VerificationKeysRepo
      const account = yield* freshAccount
      const other = yield* freshAccount
      const written = [yield* keyRecord(account), yield* keyRecord(account, { name: null, proving_system: "groth16", n_public: 0 }), yield* keyRecord(account)]
      for (const record of written) yield* repo.insert(record, { maxPerAccount: 50 })
      const foreign = yield* keyRecord(other)
      yield* repo.insert(foreign, { maxPerAccount: 50 })

      expect(yield* repo.get(account, written[1]!.id)).toEqual(Option.some(written[1]))
      expect(Option.isNone(yield* repo.get(account, foreign.id))).toBe(true)
      const first = yield* repo.list(account, { limit: 2 })
      expect(first.items).toEqual([written[2], written[1]])
      expect([first.total, first.has_more]).toEqual([3, true])
      const rest = yield* repo.list(account, { limit: 2, startingAfter: written[1]!.id })
      expect(ids(rest.items)).toEqual([written[0]!.id])
      expect(rest.has_more).toBe(false)

      expect(Option.isNone(yield* repo.remove(account, foreign.id))).toBe(true)
      expect(yield* repo.remove(account, written[0]!.id)).toEqual(Option.some(written[0]))
      expect(Option.isNone(yield* repo.remove(account, written[0]!.id))).toBe(true)
      expect((yield* repo.list(account, { limit: 10 })).total).toBe(2)
      expect(Option.isSome(yield* repo.get(other, foreign.id))).toBe(true)
    }), timeout)

  it.effect("verification key limit race: 12 concurrent registrations with room for 8 leave exactly 8; a deleted key makes room", () =>
    Effect.gen(function*() {
      const repo = yield* VerificationKeysRepo
      const account = yield* freshAccount
      const records = yield* Effect.all(Array.from({ length: 12 }, () => keyRecord(account)))
      const results = yield* Effect.all(records.map((record) => Effect.either(repo.insert(record, { maxPerAccount: 8 }))), { concurrency: "unbounded" })
      const refused = results.filter((result) => result._tag === "Left").map((result) => result.left._tag)
      expect([results.length - refused.length, refused]).toEqual([8, Array(4).fill("VerificationKeyLimitReached")])
      const listed = yield* repo.list(account, { limit: 100 })
      expect(listed.total).toBe(8)
      // Another account's room is its own.
      yield* repo.insert(yield* keyRecord(yield* freshAccount), { maxPerAccount: 8 })
      yield* repo.remove(account, listed.items[0]!.id)
      yield* repo.insert(yield* keyRecord(account), { maxPerAccount: 8 })
      expect((yield* repo.list(account, { limit: 100 })).total).toBe(8)
    }), timeout)

  it.effect("proofs: a completed proof is found by its digest, in its account only; a proof without one is not", () =>
    Effect.gen(function*() {
      yield* isolate
      const repo = yield* ProofsRepo
      const account = yield* freshAccount
      const [row, plain] = yield* queued(account, 2)
      yield* claim(T0, 2)
      const done = yield* repo.complete(row!.id, 1, { ...completion, proof_digest: "ab".repeat(32) })
      yield* repo.complete(plain!.id, 1, completion)
      const found = yield* repo.findByDigest(account, "ab".repeat(32))
      expect(found).toEqual(done)
      // The digest is storage's index, not a field of the record.
      expect(Option.getOrThrow(found)).not.toHaveProperty("proof_digest")
      expect(Option.isNone(yield* repo.findByDigest(yield* freshAccount, "ab".repeat(32)))).toBe(true)
      expect(Option.isNone(yield* repo.findByDigest(account, "cd".repeat(32)))).toBe(true)
    }), timeout)
}
