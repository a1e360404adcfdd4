import { describe, expect, it } from "@effect/vitest"
import { Accounts, Idempotency, IdempotencySweeper, IdempotencyRepo, idempotencyKeyProblem, requestFingerprint, type Timestamp } from "@mzk/core"
import { testCore } from "@mzk/testkit"
import { Effect, Layer, TestClock } from "effect"

const HOUR = 3_600_000
const created = { status: 201, headers: { "content-type": "application/json" }, body: "{\"id\":\"key_1\"}" }

const account = Effect.flatMap(Accounts, (accounts) => Effect.map(accounts.create({ name: "Idempotent" }), (a) => a.id))

describe("Idempotency (TestClock)", () => {
  it.effect("a kept response is replayed for 24 hours, then the key is free for a new request", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.UTC(2026, 10, 23, 9, 0, 0))
      const idempotency = yield* Idempotency
      const id = yield* account
      const fingerprint = requestFingerprint("POST", "/api/v1/keys", "{\"name\":\"a\"}")
      expect(yield* idempotency.begin(id, "k", fingerprint, "req_1")).toEqual({ _tag: "Claimed" })
      yield* idempotency.finish(id, "k", "req_1", created)
      yield* TestClock.adjust(24 * HOUR - 1)
      expect(yield* idempotency.begin(id, "k", fingerprint, "req_2")).toEqual({ _tag: "Replay", response: created, original_request_id: "req_1" })
      const reused = yield* Effect.flip(idempotency.begin(id, "k", requestFingerprint("POST", "/api/v1/keys", "{\"name\":\"b\"}"), "req_3"))
      expect(reused._tag).toBe("IdempotencyKeyReused")
      yield* TestClock.adjust(1)
      expect(yield* idempotency.begin(id, "k", requestFingerprint("POST", "/api/v1/keys", "{\"name\":\"b\"}"), "req_4")).toEqual({ _tag: "Claimed" })
    }).pipe(Effect.provide(testCore())))

  it.effect("a request in flight holds its key (409) until it finishes, or for 5 minutes if its process died", () =>
    Effect.gen(function*() {
      const idempotency = yield* Idempotency
      const id = yield* account
      expect(yield* idempotency.begin(id, "k", "f", "req_1")).toEqual({ _tag: "Claimed" })
      expect((yield* Effect.flip(idempotency.begin(id, "k", "f", "req_2")))._tag).toBe("IdempotencyKeyInUse")
      yield* TestClock.adjust(5 * 60_000 - 1)
      expect((yield* Effect.flip(idempotency.begin(id, "k", "f", "req_2")))._tag).toBe("IdempotencyKeyInUse")
      yield* TestClock.adjust(1)
      expect(yield* idempotency.begin(id, "k", "f", "req_3")).toEqual({ _tag: "Claimed" })
      // The dead request's answer, should it come after all, is not kept; the live one's is.
      yield* idempotency.finish(id, "k", "req_1", { ...created, status: 500 })
      yield* idempotency.finish(id, "k", "req_3", created)
      expect(yield* idempotency.begin(id, "k", "f", "req_4")).toEqual({ _tag: "Replay", response: created, original_request_id: "req_3" })
    }).pipe(Effect.provide(testCore())))

  it.effect("an abandoned request frees its key at once", () =>
    Effect.gen(function*() {
      const idempotency = yield* Idempotency
      const id = yield* account
      yield* idempotency.begin(id, "k", "f", "req_1")
      yield* idempotency.abandon(id, "k", "req_1")
      expect(yield* idempotency.begin(id, "k", "f", "req_2")).toEqual({ _tag: "Claimed" })
    }).pipe(Effect.provide(testCore())))

  it.scoped("the sweeper deletes expired keys hourly", () =>
    Effect.gen(function*() {
      const idempotency = yield* Idempotency
      const repo = yield* IdempotencyRepo
      const id = yield* account
      yield* idempotency.begin(id, "old", "f", "req_1")
      yield* idempotency.finish(id, "old", "req_1", created)
      yield* Layer.build(IdempotencySweeper)
      yield* TestClock.adjust(25 * HOUR)
      // Nothing left to delete: the sweeper did it when the record's 24 hours were over.
      expect(yield* repo.deleteExpired("2100-01-01T00:00:00.000Z" as Timestamp)).toBe(0)
    }).pipe(Effect.provide(testCore())))
})

describe("idempotency keys", () => {
  it("are 1 to 255 printable ASCII characters", () => {
    expect(idempotencyKeyProblem("a")).toBeUndefined()
    expect(idempotencyKeyProblem("9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d")).toBeUndefined()
    expect(idempotencyKeyProblem("x".repeat(255))).toBeUndefined()
    for (const bad of ["", "x".repeat(256), "é", "a\tb", " a"]) expect(idempotencyKeyProblem(bad), JSON.stringify(bad)).toBeDefined()
  })
  it("bind method, path and body", () => {
    const base = requestFingerprint("POST", "/api/v1/keys", "{}")
    expect(requestFingerprint("POST", "/api/v1/keys", "{}")).toBe(base)
    expect(requestFingerprint("POST", "/api/v1/webhooks", "{}")).not.toBe(base)
    expect(requestFingerprint("POST", "/api/v1/keys", "{ }")).not.toBe(base)
  })
})
