import { HttpApi } from "@effect/platform"
import { DEFAULT_LIMITS, IdempotencyRepo, KeysRepo, Limits, StorageError, type Timestamp } from "@mzk/core"
import { SqliteMemoryStore } from "@mzk/testkit"
import { IdempotentEndpoint, MzkApi } from "@mzk/http"
import { Context, Effect, Layer, ManagedRuntime, Option, Ref } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { allBut, keyWithScopes, MULTIPLIER } from "../helpers.js"
import { coreWithBuilds, expectEnvelope, harnessOver, makeHarness, type Reply } from "../support.js"
import { testCore } from "@mzk/testkit"

let h: Awaited<ReturnType<typeof makeHarness>>
beforeAll(async () => {
  h = await makeHarness()
})
afterAll(() => h.close())

const withKey = (key: string) => ({ "idempotency-key": key })
const replayed = (reply: Reply) => reply.headers.get("idempotent-replayed")

describe("Idempotency-Key on POST", () => {
  it("every POST of the API takes one, and only POSTs do", () => {
    HttpApi.reflect(MzkApi, {
      onGroup: () => undefined,
      onEndpoint: ({ endpoint, mergedAnnotations }) => {
        const idempotent = Option.getOrElse(Context.getOption(mergedAnnotations, IdempotentEndpoint), () => false)
        expect(idempotent, `${endpoint.method} ${endpoint.path}`).toBe(endpoint.method === "POST")
      }
    })
  })

  it("a retry gets the first response again, byte for byte, marked replayed, and the request runs once", async () => {
    const { key } = await h.newAccount("Retry")
    const hook = { url: "https://hooks.example.com/retry", events: ["proof.completed"] }
    const first = await h.call("POST", "/api/v1/webhooks", { token: key, body: hook, headers: withKey("create-hook") })
    expect(first.status).toBe(201)
    expect(replayed(first)).toBeNull()
    const again = await h.call("POST", "/api/v1/webhooks", { token: key, body: hook, headers: withKey("create-hook") })
    expect(again.status).toBe(201)
    // The signing secret included: the retrying client lost the first answer.
    expect(again.text).toBe(first.text)
    expect(again.headers.get("content-type")).toBe(first.headers.get("content-type"))
    expect(replayed(again)).toBe("true")
    expect(again.headers.get("original-request")).toBe(first.headers.get("request-id"))
    expect(again.headers.get("request-id")).not.toBe(first.headers.get("request-id"))
    expect((await h.call("GET", "/api/v1/webhooks", { token: key })).json.webhooks).toHaveLength(1)
    // Without a key, the same request is a new one.
    expect((await h.call("POST", "/api/v1/webhooks", { token: key, body: hook })).json.id).not.toBe(first.json.id)
  })

  it("a replayed key creation has the same record but not the raw key, which is never stored", async () => {
    const { account, key } = await h.newAccount("Secrets")
    const first = await h.call("POST", "/api/v1/keys", { token: key, body: { name: "ci" }, headers: withKey("ci-key") })
    expect(first.json.key).toMatch(/^mzk_/)
    const again = await h.call("POST", "/api/v1/keys", { token: key, body: { name: "ci" }, headers: withKey("ci-key") })
    expect([again.status, replayed(again)]).toEqual([201, "true"])
    expect(again.json).toEqual({ ...first.json, key: null })
    const stored = await h.run(Effect.flatMap(IdempotencyRepo, (repo) =>
      repo.claim({
        account_id: account, key: "ci-key", fingerprint: "probe", request_id: "probe", response: null,
        created_at: "2000-01-01T00:00:00.000Z" as Timestamp, expires_at: "2000-01-01T00:00:00.000Z" as Timestamp, locked_until: null
      }, "2000-01-01T00:00:00.000Z" as Timestamp)))
    expect(Option.isSome(stored)).toBe(true)
    expect(JSON.stringify(stored)).not.toContain(first.json.key)
  })

  it("the same key with another body or another path is 422 idempotency_key_reused, and runs nothing", async () => {
    const { key } = await h.newAccount("Reuse")
    await h.call("POST", "/api/v1/keys", { token: key, body: { name: "one" }, headers: withKey("k") })
    const otherBody = await h.call("POST", "/api/v1/keys", { token: key, body: { name: "two" }, headers: withKey("k") })
    expectEnvelope(otherBody, 422, "idempotency_key_reused")
    const otherPath = await h.call("POST", "/api/v1/webhooks", {
      token: key, body: { url: "https://hooks.example.com/x", events: ["proof.completed"] }, headers: withKey("k")
    })
    expectEnvelope(otherPath, 422, "idempotency_key_reused")
    const names = (await h.call("GET", "/api/v1/keys", { token: key })).json.keys.map((k: { name: string }) => k.name)
    expect(names).not.toContain("two")
    expect((await h.call("GET", "/api/v1/webhooks", { token: key })).json.webhooks).toEqual([])
  })

  it("keys are per account: another account's request with the same key is its own", async () => {
    const a = await h.newAccount("A")
    const b = await h.newAccount("B")
    const fromA = await h.call("POST", "/api/v1/proofs", { token: a.key, body: MULTIPLIER, headers: withKey("nightly-1") })
    const fromB = await h.call("POST", "/api/v1/proofs", { token: b.key, body: MULTIPLIER, headers: withKey("nightly-1") })
    expect([fromA.status, fromB.status]).toEqual([202, 202])
    expect(replayed(fromB)).toBeNull()
    expect(fromB.json.proof_id).not.toBe(fromA.json.proof_id)
    expect((await h.call("GET", `/api/v1/proofs/${fromA.json.proof_id}`, { token: b.key })).status).toBe(404)
  })

  it("a request refused before it runs (403, 400) claims nothing; the handler's own errors are kept and replayed", async () => {
    const { key } = await h.newAccount("Refusals")
    const readOnly = await keyWithScopes(h, key, allBut("webhooks:write"), "read-only")
    const hook = { url: "https://hooks.example.com/y", events: ["proof.completed"] }
    const denied = await h.call("POST", "/api/v1/webhooks", { token: readOnly, body: hook, headers: withKey("hook-1") })
    expectEnvelope(denied, 403, "insufficient_scope")
    const invalid = await h.call("POST", "/api/v1/webhooks", { token: key, body: { ...hook, events: [] }, headers: withKey("hook-1") })
    expectEnvelope(invalid, 400, "invalid_request")
    const made = await h.call("POST", "/api/v1/webhooks", { token: key, body: hook, headers: withKey("hook-1") })
    expect([made.status, replayed(made)]).toEqual([201, null])
    // A 400 from the service's own judgement (inputs against the circuit) is not kept either.
    const wrong = await h.call("POST", "/api/v1/proofs", { token: key, body: { type: "multiplier", inputs: { a: 3 } }, headers: withKey("proof-1") })
    expectEnvelope(wrong, 400, "invalid_request")
    const fixed = await h.call("POST", "/api/v1/proofs", { token: key, body: MULTIPLIER, headers: withKey("proof-1") })
    expect([fixed.status, replayed(fixed)]).toEqual([202, null])

    // 10 active keys (bootstrap, read-only and 8 more): the 11th is refused by the service, and that answer is kept.
    for (let i = 0; i < 8; i++) expect((await h.call("POST", "/api/v1/keys", { token: key, body: { name: `k${i}` } })).status).toBe(201)
    const full = await h.call("POST", "/api/v1/keys", { token: key, body: { name: "eleventh" }, headers: withKey("key-11") })
    expectEnvelope(full, 409, "key_limit_reached")
    const someKey = (await h.call("GET", "/api/v1/keys", { token: key })).json.keys.find((k: { name: string }) => k.name === "k0")
    expect((await h.call("DELETE", `/api/v1/keys/${someKey.id}`, { token: key })).status).toBe(204)
    const retried = await h.call("POST", "/api/v1/keys", { token: key, body: { name: "eleventh" }, headers: withKey("key-11") })
    // The body as it was first answered, its request id the first request's, named in Original-Request too.
    expect([retried.status, retried.text, replayed(retried)]).toEqual([409, full.text, "true"])
    expect(retried.headers.get("original-request")).toBe(full.json.error.request_id)
  })

  it("a malformed key is 400 invalid_request naming the header, and needs a valid bearer token first", async () => {
    const { key } = await h.newAccount("Malformed")
    // (Surrounding spaces never arrive: HTTP strips them from header values.)
    for (const bad of ["x".repeat(256), "tab\there"]) {
      const reply = await h.call("POST", "/api/v1/keys", { token: key, body: { name: "n" }, headers: withKey(bad) })
      expectEnvelope(reply, 400, "invalid_request")
      expect(reply.json.error.details).toEqual([{ path: "Idempotency-Key", message: expect.stringContaining("255") }])
    }
    expect((await h.call("POST", "/api/v1/keys", { token: key, body: { name: "n" }, headers: withKey("x".repeat(255)) })).status).toBe(201)
    expectEnvelope(await h.call("POST", "/api/v1/keys", { body: { name: "n" }, headers: withKey("x".repeat(256)) }), 401, "invalid_api_key")
    // GET, PATCH and DELETE ignore the header.
    expect((await h.call("GET", "/api/v1/keys", { token: key, headers: withKey("x".repeat(300)) })).status).toBe(200)
  })

  it("50 concurrent POSTs with one key make one proof and one charge; the rest are replays or 409 idempotency_key_in_use", async () => {
    const { key } = await h.newAccount("Burst")
    const replies = await Promise.all(
      Array.from({ length: 50 }, () => h.call("POST", "/api/v1/proofs", { token: key, body: MULTIPLIER, headers: withKey("burst") }))
    )
    const fresh = replies.filter((r) => r.status === 202 && replayed(r) === null)
    expect(fresh).toHaveLength(1)
    for (const reply of replies) {
      if (reply === fresh[0]) continue
      if (reply.status === 409) expectEnvelope(reply, 409, "idempotency_key_in_use")
      else expect([reply.status, replayed(reply), reply.json.proof_id]).toEqual([202, "true", fresh[0]!.json.proof_id])
    }
    expect((await h.call("GET", "/api/v1/proofs", { token: key })).json.total).toBe(1)
    // The burst spent one of the key's 60 a minute (only its fresh reply carries the header), and
    // the next request one more. The window is a wall-clock minute, so on a slow machine the next
    // request may fall in a new one: then `t` (seconds left) has grown, and only its own spend counts.
    const rate = (reply: Reply) => {
      const match = /^"key";r=(\d+);t=(\d+)$/.exec(reply.headers.get("ratelimit") ?? "")
      expect(match, `ratelimit: ${reply.headers.get("ratelimit")}`).not.toBeNull()
      return { remaining: Number(match![1]), reset: Number(match![2]) }
    }
    const burst = rate(fresh[0]!)
    expect(burst.remaining).toBe(59)
    const next = rate(await h.call("POST", "/api/v1/proofs", { token: key, body: MULTIPLIER }))
    expect(next.remaining).toBe(next.reset > burst.reset ? 59 : 58)
  })
})

describe("Idempotency-Key and the rate limits", () => {
  it("a 429 is not kept: the retry runs again, and a replay costs nothing", async () => {
    const limited = await harnessOver(ManagedRuntime.make(Layer.merge(coreWithBuilds(), Layer.succeed(Limits, { ...DEFAULT_LIMITS, proofsPerDayPerAccount: 2 }))))
    try {
      const { key } = await limited.newAccount("Quota")
      const first = await limited.call("POST", "/api/v1/proofs", { token: key, body: MULTIPLIER, headers: withKey("p1") })
      expect(first.status).toBe(202)
      // Replays of the kept 202 are free: the quota's second proof is still there.
      for (let i = 0; i < 3; i++) {
        expect(replayed(await limited.call("POST", "/api/v1/proofs", { token: key, body: MULTIPLIER, headers: withKey("p1") }))).toBe("true")
      }
      expect((await limited.call("POST", "/api/v1/proofs", { token: key, body: MULTIPLIER })).status).toBe(202)
      const refused = await limited.call("POST", "/api/v1/proofs", { token: key, body: MULTIPLIER, headers: withKey("p2") })
      expectEnvelope(refused, 429, "rate_limit_exceeded")
      const retried = await limited.call("POST", "/api/v1/proofs", { token: key, body: MULTIPLIER, headers: withKey("p2") })
      expectEnvelope(retried, 429, "rate_limit_exceeded")
      expect(replayed(retried)).toBeNull()
      expect(retried.headers.get("retry-after")).not.toBeNull()
    } finally {
      await limited.close()
    }
  })
})

describe("Idempotency-Key and the RateLimit fields", () => {
  it("the first answer carries the key's RateLimit fields; its replay, charged nothing, carries none", async () => {
    const { key } = await h.newAccount("Windows")
    const first = await h.call("POST", "/api/v1/proofs", { token: key, body: MULTIPLIER, headers: withKey("w1") })
    expect(first.status).toBe(202)
    expect(first.headers.get("ratelimit")).toMatch(/^"key";r=59;t=\d+$/)
    const replay = await h.call("POST", "/api/v1/proofs", { token: key, body: MULTIPLIER, headers: withKey("w1") })
    expect([replay.status, replayed(replay), replay.json.proof_id]).toEqual([202, "true", first.json.proof_id])
    expect(replay.headers.get("ratelimit")).toBeNull()
    expect(replay.headers.get("ratelimit-policy")).toBeNull()
    expect(replay.headers.get("request-id")).not.toBe(first.headers.get("request-id"))
  })
})

describe("Idempotency-Key and a storage failure", () => {
  it("a 503 is not kept: the retry with the same key runs anew, and its answer is the one replayed", async () => {
    // The memory store, whose next key insert once armed fails as a database that lost its disk would.
    const armed = Effect.runSync(Ref.make(false))
    const inserts = Effect.runSync(Ref.make(0))
    const FailingOnce = Layer.map(SqliteMemoryStore, (context) => {
      const keys = Context.get(context, KeysRepo)
      return Context.add(context, KeysRepo, {
        ...keys,
        insert: (key, limit) =>
          Effect.zipRight(
            Ref.update(inserts, (n) => n + 1),
            Effect.flatMap(Ref.getAndSet(armed, false), (fail) =>
              fail ? Effect.fail(new StorageError({ message: "the disk is full", cause: new Error("database or disk is full") })) : keys.insert(key, limit))
          )
      })
    })
    const h = await harnessOver(ManagedRuntime.make(coreWithBuilds(testCore(FailingOnce))))
    try {
      const { key } = await h.newAccount("Disk")
      const before = Effect.runSync(Ref.get(inserts))
      Effect.runSync(Ref.set(armed, true))
      const failed = await h.call("POST", "/api/v1/keys", { token: key, body: { name: "ci" }, headers: withKey("ci-key") })
      expectEnvelope(failed, 503, "service_unavailable")
      expect(failed.text).not.toContain("disk")

      const retried = await h.call("POST", "/api/v1/keys", { token: key, body: { name: "ci" }, headers: withKey("ci-key") })
      expect([retried.status, replayed(retried)]).toEqual([201, null])
      expect(retried.json.key).toMatch(/^mzk_/)
      // It ran: a second insert, and the key it made works.
      expect(Effect.runSync(Ref.get(inserts)) - before).toBe(2)
      expect((await h.call("GET", "/api/v1/keys", { token: retried.json.key })).status).toBe(200)

      // From now on the kept answer is the 201, replayed without running.
      const again = await h.call("POST", "/api/v1/keys", { token: key, body: { name: "ci" }, headers: withKey("ci-key") })
      expect([again.status, replayed(again), again.json.id]).toEqual([201, "true", retried.json.id])
      expect(again.headers.get("original-request")).toBe(retried.headers.get("request-id"))
      expect(Effect.runSync(Ref.get(inserts)) - before).toBe(2)
    } finally {
      await h.close()
    }
  })
})
