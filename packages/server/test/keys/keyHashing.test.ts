import { describe, expect, it } from "@effect/vitest"
import { Accounts, ApiKeyHashing, ApiKeys, hashApiKey, KeysRepo } from "@mzk/core"
import { Effect, Option, Redacted } from "effect"
import fc from "fast-check"
import { CoreServicesLive, NodeApiKeyHashing } from "../../src/index.js"

describe("API key hashing with node:crypto", () => {
  it.effect("gives exactly the core's SHA-256 hex for any text", () =>
    Effect.gen(function*() {
      const { hash } = yield* ApiKeyHashing
      fc.assert(fc.property(fc.string({ unit: "binary" }), (text) => {
        expect(hash(text)).toBe(hashApiKey(text))
      }))
    }).pipe(Effect.provide(NodeApiKeyHashing)))

  it.scoped("is what the server's keys are stored and found by", () =>
    Effect.gen(function*() {
      const account = yield* (yield* Accounts).create({ name: "hashing" })
      const keys = yield* ApiKeys
      const created = yield* keys.create(account.id, { name: "ci" })
      const raw = Redacted.value(created.secret)
      const stored = yield* (yield* KeysRepo).findByHash(hashApiKey(raw))
      expect(Option.map(stored, (key) => key.id)).toEqual(Option.some(created.api_key.id))
      expect((yield* keys.authenticate(created.secret)).account_id).toBe(account.id)
    }).pipe(Effect.provide(CoreServicesLive({ database: { kind: "sqlite", filename: ":memory:" } }))))
})
