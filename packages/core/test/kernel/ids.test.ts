import { describe, expect, it } from "@effect/vitest"
import { AccountId, Entropy, formatId, ID_PREFIXES, Ids, KeyId, makeId, now, type RandomBits, Timestamp } from "@mzk/core"
import fc from "fast-check"
import { SeededEntropy } from "@mzk/testkit"
import { Effect, Layer, Schema, TestClock } from "effect"

const bits = (random: bigint): RandomBits => [Number(random >> 40n), Number(random & (2n ** 40n - 1n))]

describe("ids and timestamps", () => {
  it.effect("every kind carries the spec's prefix and validates against its own schema only", () =>
    Effect.gen(function*() {
      for (const [kind, prefix] of Object.entries(ID_PREFIXES)) {
        const id = yield* makeId(kind as keyof typeof ID_PREFIXES)
        expect(id).toMatch(new RegExp(`^${prefix}_[0-9a-hjkmnp-tv-z]{26}$`))
      }
      const key = yield* makeId("key")
      expect(Schema.is(KeyId)(key)).toBe(true)
      expect(Schema.is(AccountId)(key)).toBe(false)
    }).pipe(Effect.provide(Ids.layer.pipe(Layer.provide(SeededEntropy(1))))))

  it.effect("ids sort by creation time on the Clock", () =>
    Effect.gen(function*() {
      const ids: Array<string> = []
      for (let i = 0; i < 20; i++) {
        ids.push(yield* makeId("proof"))
        yield* TestClock.adjust(i % 2 === 0 ? "1 millis" : "3 hours")
      }
      expect([...ids].sort()).toEqual(ids)
      expect(new Set(ids).size).toBe(ids.length)
    }).pipe(Effect.provide(Ids.layer.pipe(Layer.provide(SeededEntropy(2))))))

  it("an id spells 48 bits of milliseconds then 80 random bits in Crockford base32, most significant first", () => {
    const digits = "0123456789abcdefghjkmnpqrstvwxyz"
    const read = (text: string) => [...text].reduce((n, c) => n * 32n + BigInt(digits.indexOf(c)), 0n)
    expect(formatId("proof", 0, bits(0n))).toBe(`proof_${"0".repeat(26)}`)
    expect(formatId("proof", 2 ** 48 - 1, bits(2n ** 80n - 1n))).toBe(`proof_7${"z".repeat(25)}`)
    expect(formatId("proof", 0, bits(1n << 50n))).toBe(`proof_${"0".repeat(10)}000001${"0".repeat(10)}`)
    fc.assert(fc.property(fc.integer({ min: 0, max: 2 ** 48 - 1 }), fc.bigInt(0n, 2n ** 80n - 1n), (millis, random) => {
      const id = formatId("key", millis, bits(random))
      expect(id).toMatch(/^key_[0-9a-hjkmnp-tv-z]{26}$/)
      expect(read(id.slice(4, 14))).toBe(BigInt(millis))
      expect(read(id.slice(14))).toBe(random)
    }))
  })

  it.effect("ids made within one millisecond count up, carrying across the halves of the random part", () =>
    Effect.gen(function*() {
      const ids: Array<string> = []
      for (let i = 0; i < 4; i++) ids.push(yield* makeId("proof"))
      expect([...ids].sort()).toEqual(ids)
      expect(new Set(ids).size).toBe(4)
      // The first id's random part is 2^40 - 2: its low half overflows on the second increment.
      expect(ids.map((id) => id.slice(16))).toEqual(["00000000zzzzzzzy", "00000000zzzzzzzz", "0000000100000000", "0000000100000001"])
    }).pipe(Effect.provide(Ids.layer.pipe(Layer.provide(Layer.succeed(Entropy, {
      bytes: (length) => Effect.succeed(Uint8Array.from({ length }, (_, i) => (i < 5 ? 0 : i < 9 ? 255 : 254)))
    }))))))

  it.effect("timestamps are ISO 8601 UTC with milliseconds, read from the Clock", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.UTC(2026, 10, 22, 10, 0, 0, 7))
      const stamp = yield* now
      expect(stamp).toBe("2026-11-22T10:00:00.007Z")
      expect(Schema.is(Timestamp)(stamp)).toBe(true)
      expect(Schema.is(Timestamp)("2026-11-22T10:00:00Z")).toBe(false)
    }))
})
