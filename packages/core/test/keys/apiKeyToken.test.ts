import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck as fc, Redacted } from "effect"
import { generateApiKey, hashApiKey, isWellFormedApiKey, displayPrefix } from "@mzk/core"
import { crc32 } from "../../src/kernel/crc32.js"

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

/** A key made from exactly these 32 bytes, through the same code path production uses. */
const keyFromBytes = (bytes: Uint8Array) =>
  Redacted.value(Effect.runSync(generateApiKey({ bytes: () => Effect.succeed(bytes) })))

const bytes32 = fc.uint8Array({ minLength: 32, maxLength: 32 })

describe("API key format", () => {
  it("CRC-32 matches the standard check value", () => {
    expect(crc32("123456789")).toBe(0xcbf43926)
    expect(crc32("")).toBe(0)
  })

  it("is mzk_ + 43 base62 characters + a 6-character checksum, 256 bits of randomness", () => {
    const allZero = keyFromBytes(new Uint8Array(32))
    const allOnes = keyFromBytes(new Uint8Array(32).fill(255))
    for (const key of [allZero, allOnes]) {
      expect(key).toMatch(/^mzk_[0-9A-Za-z]{49}$/)
      expect(isWellFormedApiKey(key)).toBe(true)
    }
    expect(allZero).not.toBe(allOnes)
    expect(displayPrefix(allOnes)).toBe(allOnes.slice(0, 10))
  })

  it.prop("every generated key parses and checks", [bytes32], ([bytes]) => {
    const key = keyFromBytes(bytes)
    expect(key).toHaveLength(53)
    expect(isWellFormedApiKey(key)).toBe(true)
  }, { fastCheck: { numRuns: 500 } })

  it.prop(
    "every single-character change is rejected",
    [bytes32, fc.nat(), fc.constantFrom(..."0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_-+/= .")],
    ([bytes, at, replacement]) => {
      const key = keyFromBytes(bytes)
      const index = at % key.length
      fc.pre(key[index] !== replacement)
      const changed = key.slice(0, index) + replacement + key.slice(index + 1)
      expect(isWellFormedApiKey(changed)).toBe(false)
    },
    { fastCheck: { numRuns: 2000 } }
  )

  it("rejects every substitution of every position of one key exhaustively", () => {
    const key = keyFromBytes(new Uint8Array(32).map((_, i) => i * 7))
    let tried = 0
    for (let i = 0; i < key.length; i++) {
      for (const c of BASE62 + "_") {
        if (c === key[i]) continue
        tried++
        expect(isWellFormedApiKey(key.slice(0, i) + c + key.slice(i + 1))).toBe(false)
      }
    }
    expect(tried).toBe(53 * 62)
  })

  it.prop("insertions and deletions are rejected", [bytes32, fc.nat()], ([bytes, at]) => {
    const key = keyFromBytes(bytes)
    const index = at % key.length
    expect(isWellFormedApiKey(key.slice(0, index) + key.slice(index + 1))).toBe(false)
    expect(isWellFormedApiKey(key.slice(0, index) + "a" + key.slice(index))).toBe(false)
  })

  it("stores SHA-256 hex of the key, which does not contain the key", () => {
    const key = keyFromBytes(new Uint8Array(32).fill(9))
    const hash = hashApiKey(key)
    expect(hash).toMatch(/^[0-9a-f]{64}$/)
    expect(hash).toBe(hashApiKey(key))
    expect(hashApiKey(key.slice(0, -1) + (key.endsWith("a") ? "b" : "a"))).not.toBe(hash)
  })
})
