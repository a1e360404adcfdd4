import { expect, it } from "@effect/vitest"
import { Accounts, ApiKeys } from "@mzk/core"
import { FakeProver, makeHttpClient, startWebhookReceiver, verifyWebhookSignature } from "@mzk/testkit"
import { Effect, Redacted } from "effect"
import { describe } from "vitest"
import { describePostgres, expectRefused, type Reply, serverWithKey, STORES } from "../bothStores.js"
import { startServer } from "../realServer.js"

/**
 * Metadata over a real port: set at creation on proofs, batches, keys and
 * webhooks (circuits: `packages/http/test/api/metadata.http.test.ts`, over the fake compiler), merged
 * by a webhook update, returned on every record, refused with a 400 naming the field, and the
 * proofs list filtered by `metadata[<key>]=<value>` on both stores.
 */

type Call = (method: string, path: string, body?: unknown) => Effect.Effect<Reply>

const proof = (call: Call, metadata?: Record<string, string>) =>
  Effect.map(
    call("POST", "/api/v1/proofs", { type: "multiplier", inputs: { a: 3, b: 11 }, ...(metadata === undefined ? {} : { metadata }) }),
    (reply) => {
      expect(reply.status).toBe(202)
      return reply.json.proof_id as string
    }
  )

const ids = (reply: Reply) => reply.json.proofs.map((p: { proof_id: string }) => p.proof_id)

const roundTrips = (database: (typeof STORES)[number][1]) =>
  Effect.gen(function*() {
    const { call } = yield* serverWithKey(database)

    // Proofs: on the 202, on GET, on the list; none set is `{}`.
    const created = yield* call("POST", "/api/v1/proofs", { type: "multiplier", inputs: { a: 3, b: 11 }, metadata: { order: "ord_1", "x.y:z-w_1": "é ✓" } })
    expect(created.status).toBe(202)
    expect(created.json.metadata).toEqual({ order: "ord_1", "x.y:z-w_1": "é ✓" })
    expect((yield* call("GET", `/api/v1/proofs/${created.json.proof_id}`)).json.metadata).toEqual({ order: "ord_1", "x.y:z-w_1": "é ✓" })
    const bare = yield* call("POST", "/api/v1/proofs", { type: "multiplier", inputs: { a: 1, b: 1 } })
    expect(bare.json.metadata).toEqual({})
    // An empty value stores nothing.
    const emptied = yield* call("POST", "/api/v1/proofs", { type: "multiplier", inputs: { a: 1, b: 1 }, metadata: { gone: "", kept: "1" } })
    expect(emptied.json.metadata).toEqual({ kept: "1" })

    // Batches: the batch's pairs on every proof, under each item's own.
    const batch = yield* call("POST", "/api/v1/proofs/batch", {
      metadata: { batch: "b1", tier: "gold" },
      proofs: [
        { type: "multiplier", inputs: { a: 2, b: 3 } },
        { type: "multiplier", inputs: { a: 2, b: 5 }, metadata: { tier: "silver", line: "2" } }
      ]
    })
    expect(batch.status).toBe(202)
    expect(batch.json.metadata).toEqual({ batch: "b1", tier: "gold" })
    expect(batch.json.proofs.map((p: { metadata: unknown }) => p.metadata)).toEqual([
      { batch: "b1", tier: "gold" },
      { batch: "b1", tier: "silver", line: "2" }
    ])
    expect((yield* call("GET", `/api/v1/proofs/${batch.json.proofs[1].proof_id}`)).json.metadata).toEqual({ batch: "b1", tier: "silver", line: "2" })

    // Keys: on create, on the list; a roll's new key keeps them.
    const key = yield* call("POST", "/api/v1/keys", { name: "ci", metadata: { team: "payments" } })
    expect(key.status).toBe(201)
    expect(key.json.metadata).toEqual({ team: "payments" })
    const keys = (yield* call("GET", "/api/v1/keys")).json.keys as Array<{ id: string; metadata: unknown }>
    expect(keys.find((k) => k.id === key.json.id)?.metadata).toEqual({ team: "payments" })
    expect(keys.find((k) => k.id !== key.json.id)?.metadata).toEqual({})
    const rolled = yield* call("POST", `/api/v1/keys/${key.json.id}/roll`, {})
    expect(rolled.json.metadata).toEqual({ team: "payments" })

    // Webhooks: on create, get, list; an update merges (a value sets, "" deletes, the rest is kept).
    const hook = yield* call("POST", "/api/v1/webhooks", { url: "http://127.0.0.1:9/hook", events: ["proof.completed"], metadata: { env: "prod", owner: "ops" } })
    expect(hook.status).toBe(201)
    expect(hook.json.metadata).toEqual({ env: "prod", owner: "ops" })
    const patched = yield* call("PATCH", `/api/v1/webhooks/${hook.json.id}`, { metadata: { env: "staging", owner: "", region: "eu" } })
    expect(patched.status).toBe(200)
    expect(patched.json.metadata).toEqual({ env: "staging", region: "eu" })
    expect((yield* call("GET", `/api/v1/webhooks/${hook.json.id}`)).json.metadata).toEqual({ env: "staging", region: "eu" })
    expect((yield* call("PATCH", `/api/v1/webhooks/${hook.json.id}`, { active: false })).json.metadata).toEqual({ env: "staging", region: "eu" })
    expect((yield* call("GET", "/api/v1/webhooks")).json.webhooks[0].metadata).toEqual({ env: "staging", region: "eu" })

    // 50 keys after a merge: the update is refused whole, nothing changed.
    const fortyEight = Object.fromEntries(Array.from({ length: 48 }, (_, i) => [`k${i}`, "v"]))
    const full = yield* call("PATCH", `/api/v1/webhooks/${hook.json.id}`, { metadata: fortyEight })
    expect(Object.keys(full.json.metadata)).toHaveLength(50)
    const over = yield* call("PATCH", `/api/v1/webhooks/${hook.json.id}`, { metadata: { one: "1", two: "2" }, description: "changed" })
    expectRefused("51 keys after the merge", over, "metadata")
    const after = (yield* call("GET", `/api/v1/webhooks/${hook.json.id}`)).json
    expect(Object.keys(after.metadata)).toHaveLength(50)
    expect(after.description).toBeNull()
    // Deleting one and adding one in the same update fits.
    expect((yield* call("PATCH", `/api/v1/webhooks/${hook.json.id}`, { metadata: { k0: "", one: "1" } })).status).toBe(200)
  })

const filters = (database: (typeof STORES)[number][1]) =>
  Effect.gen(function*() {
    const { call } = yield* serverWithKey(database)
    const a = yield* proof(call, { order: "123", tier: "gold" })
    const b = yield* proof(call, { order: "123", tier: "silver" })
    const c = yield* proof(call, { order: "456", tier: "gold" })
    yield* proof(call)
    const d = yield* proof(call, { order: "123", tier: "gold", extra: "x" })

    const list = (query: string) => call("GET", `/api/v1/proofs?${query}`)
    const matched = yield* list("metadata[order]=123")
    expect(matched.status).toBe(200)
    expect(ids(matched)).toEqual([d, b, a])
    expect(matched.json.total).toBe(3)
    // Several pairs: all must hold.
    expect(ids(yield* list("metadata[order]=123&metadata[tier]=gold"))).toEqual([d, a])
    expect(ids(yield* list("metadata[tier]=gold"))).toEqual([d, c, a])
    // No match: a value or a key no proof has.
    expect((yield* list("metadata[order]=999")).json).toMatchObject({ proofs: [], total: 0, has_more: false })
    expect((yield* list("metadata[nothing]=123")).json).toMatchObject({ proofs: [], total: 0 })
    // Exact: neither a prefix nor another case matches.
    expect(ids(yield* list("metadata[order]=12"))).toEqual([])
    expect(ids(yield* list("metadata[tier]=Gold"))).toEqual([])
    // Percent-encoded brackets are the same parameter.
    expect(ids(yield* list("metadata%5Border%5D=456"))).toEqual([c])
    // With status and paging.
    expect(ids(yield* list("status=queued&metadata[order]=123"))).toEqual([d, b, a])
    expect(ids(yield* list("status=completed&metadata[order]=123"))).toEqual([])
    const first = yield* list("metadata[order]=123&limit=2")
    expect(ids(first)).toEqual([d, b])
    expect(first.json).toMatchObject({ total: 3, has_more: true })
    const second = yield* list(`metadata[order]=123&limit=2&starting_after=${b}`)
    expect(ids(second)).toEqual([a])
    expect(second.json).toMatchObject({ total: 3, has_more: false })

    // Another account's proofs never match.
    const other = yield* serverWithKey(Effect.succeed({ kind: "sqlite", filename: ":memory:" } as const))
    expect(ids(yield* other.call("GET", "/api/v1/proofs?metadata[order]=123"))).toEqual([])

    // A filter key or value no record could hold is a 400 naming its parameter.
    expectRefused("bad key", yield* list("metadata[a%20b]=1"), "metadata[a b]")
    expectRefused("long key", yield* list(`metadata[${"k".repeat(41)}]=1`), `metadata[${"k".repeat(41)}]`)
    expectRefused("empty key", yield* list("metadata[]=1"), "metadata[]")
    expectRefused("empty value", yield* list("metadata[order]="), "metadata[order]")
    expectRefused("long value", yield* list(`metadata[order]=${"v".repeat(501)}`), "metadata[order]")
    expectRefused("repeated", yield* list("metadata[order]=1&metadata[order]=2"), "metadata[order]")
  })

const refusals = (database: (typeof STORES)[number][1]) =>
  Effect.gen(function*() {
    const { call } = yield* serverWithKey(database)
    const many = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, "v"]))
    const longKey = "k".repeat(41)
    const cases: ReadonlyArray<readonly [string, unknown, string]> = [
      ["51 keys", many, "metadata"],
      ["a 41-character key", { [longKey]: "v" }, `metadata.${longKey}`],
      ["a 501-character value", { note: "v".repeat(501) }, "metadata.note"],
      ["a number value", { count: 5 }, "metadata.count"],
      ["a null value", { count: null }, "metadata.count"],
      ["an object value", { nested: { a: "b" } }, "metadata.nested"],
      ["an array", ["a"], "metadata"],
      ["a string", "order=1", "metadata"],
      ["null", null, "metadata"],
      ["a key with brackets", { "a[b]": "v" }, "metadata.a[b]"],
      ["a key with a space", { "a b": "v" }, "metadata.a b"],
      ["an empty key", { "": "v" }, "metadata."],
      ["a NUL in a value", { note: "a\u0000b" }, "metadata.note"],
      // No UTF-8 encodes it: Postgres refused it in its JSON column with a 503 (proofs, webhooks).
      ["a lone surrogate in a value", { note: "a\ud800b" }, "metadata.note"]
    ]
    for (const [what, metadata, path] of cases) {
      expectRefused(`proof with ${what}`, yield* call("POST", "/api/v1/proofs", { type: "multiplier", inputs: { a: 1, b: 1 }, metadata }), path)
      expectRefused(`key with ${what}`, yield* call("POST", "/api/v1/keys", { name: "k2", metadata }), path)
      expectRefused(
        `webhook with ${what}`,
        yield* call("POST", "/api/v1/webhooks", { url: "http://127.0.0.1:9/h", events: ["proof.completed"], metadata }),
        path
      )
      expectRefused(`batch with ${what}`, yield* call("POST", "/api/v1/proofs/batch", { proofs: [{ type: "multiplier", inputs: { a: 1, b: 1 } }], metadata }), path)
      expectRefused(
        `batch item with ${what}`,
        yield* call("POST", "/api/v1/proofs/batch", { proofs: [{ type: "multiplier", inputs: { a: 1, b: 1 }, metadata }] }),
        `proofs.0.${path}`
      )
    }
    // Exactly at the limits is accepted.
    const fifty = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, "v".repeat(500)]))
    fifty["k".repeat(40)] = fifty.k0!
    delete fifty.k0
    const atLimits = yield* call("POST", "/api/v1/proofs", { type: "multiplier", inputs: { a: 1, b: 1 }, metadata: fifty })
    expect(atLimits.status).toBe(202)
    expect(atLimits.json.metadata).toEqual(fifty)
    // A batch whose pairs and an item's make more than 50 names the item.
    const half = (from: number) => Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`m${from + i}`, "v"]))
    const merged = yield* call("POST", "/api/v1/proofs/batch", {
      metadata: half(0),
      proofs: [{ type: "multiplier", inputs: { a: 1, b: 1 } }, { type: "multiplier", inputs: { a: 1, b: 1 }, metadata: half(30) }]
    })
    expectRefused("batch merged over 50", merged, "proofs.1.metadata")
    // Nothing refused was stored.
    expect((yield* call("GET", "/api/v1/proofs")).json.total).toBe(1)
  })

/**
 * `__proto__` is a key like any other (the key rule allows it): JSON.parse makes it an own
 * property, and every copy of metadata must keep it, not set a prototype. It was dropped from
 * proofs, keys and webhooks (201/202 without it), and `metadata[__proto__]=x` switched the filter
 * off (alone every proof matched; beside another pair only that pair held). `constructor` and
 * `toString` are keys too, never Object.prototype's.
 */
const reservedNames = (database: (typeof STORES)[number][1]) =>
  Effect.gen(function*() {
    const { call } = yield* serverWithKey(database)
    // Computed keys: `{ ["__proto__"]: v }` is an own property, as JSON.parse makes it.
    const pairs = { ["__proto__"]: "p1", constructor: "c", toString: "t", order: "o1" }
    const expectPairs = (what: string, metadata: unknown, expected: Record<string, string>) => {
      expect(metadata, what).toEqual(expected)
      expect(Object.keys(metadata as object).sort(), what).toEqual(Object.keys(expected).sort())
    }

    const created = yield* call("POST", "/api/v1/proofs", { type: "multiplier", inputs: { a: 3, b: 11 }, metadata: pairs })
    expect(created.status).toBe(202)
    expectPairs("proof, 202", created.json.metadata, pairs)
    expectPairs("proof, GET", (yield* call("GET", `/api/v1/proofs/${created.json.proof_id}`)).json.metadata, pairs)
    const other = yield* proof(call, { ["__proto__"]: "p2", order: "o1" })
    const bare = yield* proof(call, { order: "o1" })

    // A batch's pairs and an item's merge on the name too: the item's own wins.
    const batch = yield* call("POST", "/api/v1/proofs/batch", {
      metadata: { ["__proto__"]: "batch" },
      proofs: [{ type: "multiplier", inputs: { a: 2, b: 3 } }, { type: "multiplier", inputs: { a: 2, b: 5 }, metadata: { ["__proto__"]: "item" } }]
    })
    expect(batch.status).toBe(202)
    expectPairs("batch", batch.json.metadata, { ["__proto__"]: "batch" })
    expect(batch.json.proofs.map((p: { metadata: Record<string, string> }) => Object.hasOwn(p.metadata, "__proto__") ? p.metadata["__proto__"] : undefined))
      .toEqual(["batch", "item"])

    // The filter holds every pair it is given, `__proto__` included, alone or with another.
    const list = (query: string) => Effect.map(call("GET", `/api/v1/proofs?${query}`), (reply) => {
      expect(reply.status, query).toBe(200)
      return ids(reply)
    })
    expect(yield* list("metadata[__proto__]=p1")).toEqual([created.json.proof_id])
    expect(yield* list("metadata[__proto__]=nothing")).toEqual([])
    expect(yield* list("metadata[__proto__]=p2&metadata[order]=o1")).toEqual([other])
    expect(yield* list("metadata[__proto__]=nothing&metadata[order]=o1")).toEqual([])
    expect(yield* list("metadata[order]=o1&metadata[__proto__]=nothing")).toEqual([])
    expect(yield* list("metadata[constructor]=c")).toEqual([created.json.proof_id])
    expect(yield* list("metadata[constructor]=nothing")).toEqual([])
    expect(yield* list("metadata[order]=o1")).toEqual([bare, other, created.json.proof_id])

    // Keys: on create, on the list, on a roll's new key.
    const key = yield* call("POST", "/api/v1/keys", { name: "reserved", metadata: pairs })
    expect(key.status).toBe(201)
    expectPairs("key, 201", key.json.metadata, pairs)
    const keys = (yield* call("GET", "/api/v1/keys")).json.keys as Array<{ id: string; metadata: unknown }>
    expectPairs("key, list", keys.find((k) => k.id === key.json.id)?.metadata, pairs)
    expectPairs("key, roll", (yield* call("POST", `/api/v1/keys/${key.json.id}/roll`, {})).json.metadata, pairs)

    // Webhooks: on create, GET, and an update sets and deletes it like any key.
    const hook = yield* call("POST", "/api/v1/webhooks", { url: "http://127.0.0.1:9/hook", events: ["proof.completed"], metadata: pairs })
    expect(hook.status).toBe(201)
    expectPairs("webhook, 201", hook.json.metadata, pairs)
    expectPairs("webhook, GET", (yield* call("GET", `/api/v1/webhooks/${hook.json.id}`)).json.metadata, pairs)
    const set = yield* call("PATCH", `/api/v1/webhooks/${hook.json.id}`, { metadata: { ["__proto__"]: "p3", constructor: "" } })
    expect(set.status).toBe(200)
    expectPairs("webhook, PATCH", set.json.metadata, { ["__proto__"]: "p3", toString: "t", order: "o1" })
    const deleted = yield* call("PATCH", `/api/v1/webhooks/${hook.json.id}`, { metadata: { ["__proto__"]: "" } })
    expectPairs("webhook, PATCH deleting it", deleted.json.metadata, { toString: "t", order: "o1" })
    expectPairs("webhook, list", (yield* call("GET", "/api/v1/webhooks")).json.webhooks[0].metadata, { toString: "t", order: "o1" })
  })

describe("metadata over a real port", () => {
  for (const [name, database] of STORES) {
    const run = name === "Postgres" ? describePostgres : describe
    run(name, () => {
      it.scopedLive(`${name}: round-trips on proofs, batches, keys and webhooks; a webhook update merges`, () => roundTrips(database), 60_000)
      it.scopedLive(`${name}: the proofs list filters by metadata[<key>]=<value>, with status and paging`, () => filters(database), 60_000)
      it.scopedLive(`${name}: each invalid metadata is a 400 naming the field, and nothing is stored`, () => refusals(database), 60_000)
      it.scopedLive(`${name}: __proto__, constructor and toString are keys like any other, stored and filtered on`, () => reservedNames(database), 60_000)
    })
  }

  it.scopedLive("events carry the record's metadata: delivered, signed, and in GET /events", () =>
    Effect.gen(function*() {
      const receiver = yield* startWebhookReceiver()
      const { baseUrl, context } = yield* startServer({ allowInsecureWebhooks: true, workers: true, prover: FakeProver() })
      const first = yield* Effect.gen(function*() {
        const account = yield* (yield* Accounts).create({ name: "Metadata events" })
        return Redacted.value((yield* (yield* ApiKeys).create(account.id, { name: "bootstrap" })).secret)
      }).pipe(Effect.provide(context))
      const client = makeHttpClient(baseUrl, { token: first })
      const call = (method: string, path: string, body?: unknown) => Effect.promise(() => client.send(method, path, { body }))

      const hook = yield* call("POST", "/api/v1/webhooks", {
        url: receiver.url,
        events: ["proof.completed", "proof.verified", "proof.canceled", "key.created", "key.revoked", "key.rolled"],
        metadata: { hook: "h1" }
      })
      expect(hook.status).toBe(201)
      const secret = hook.json.secret as string

      // `__proto__` among them: events copy metadata, and a copy must keep it.
      const key = yield* call("POST", "/api/v1/keys", { name: "evented", metadata: { team: "t1", ["__proto__"]: "k1" } })
      const rolled = yield* call("POST", `/api/v1/keys/${key.json.id}/roll`, { expires_in: 0 })
      expect((yield* call("DELETE", `/api/v1/keys/${rolled.json.id}`)).status).toBe(204)
      const made = yield* call("POST", "/api/v1/proofs", { type: "multiplier", inputs: { a: 3, b: 11 }, metadata: { order: "o1", ["__proto__"]: "p1" } })
      const completed = yield* Effect.promise(async () => {
        for (let i = 0; i < 200; i++) {
          const reply = await client.send("GET", `/api/v1/proofs/${made.json.proof_id}`)
          if (reply.json.status === "completed") return reply.json
          await new Promise((resolve) => setTimeout(resolve, 50))
        }
        throw new Error("the proof did not complete")
      })
      expect(completed.metadata).toEqual({ order: "o1", ["__proto__"]: "p1" })
      const verified = yield* call("GET", `/api/v1/proofs/${made.json.proof_id}/verify`)
      expect(verified.json.valid).toBe(true)
      expect(verified.json.metadata).toEqual({ order: "o1", ["__proto__"]: "p1" })
      const queued = yield* call("POST", "/api/v1/proofs", { type: "multiplier", inputs: { a: 1, b: 1 }, metadata: { order: "o2" } })
      // Canceled unless the worker was quicker; either way its event carries the metadata.
      yield* call("POST", `/api/v1/proofs/${queued.json.proof_id}/cancel`)
      const tested = yield* call("POST", `/api/v1/webhooks/${hook.json.id}/test`)
      expect(tested.status).toBeLessThan(300)

      const expected: Record<string, unknown> = {
        "key.created": { team: "t1", ["__proto__"]: "k1" },
        "key.rolled": { team: "t1", ["__proto__"]: "k1" },
        "key.revoked": { team: "t1", ["__proto__"]: "k1" },
        "proof.completed": { order: "o1", ["__proto__"]: "p1" },
        "proof.verified": { order: "o1", ["__proto__"]: "p1" },
        "webhook.test": { hook: "h1" }
      }
      // One delivery per event: key.created, key.rolled, key.revoked, two of each proof, webhook.test.
      const received = yield* receiver.waitFor(7).pipe(Effect.timeout("30 seconds"))
      const bodies = received.map((request) => {
        const body = request.rawBody.toString("utf8")
        verifyWebhookSignature(body, request.headers["service-signature"] as string, secret)
        return JSON.parse(body) as { type: string; data: { metadata: unknown; proof_id?: string } }
      })
      for (const [type, metadata] of Object.entries(expected)) {
        const found = bodies.filter((b) => b.type === type)
        expect(found.length, type).toBeGreaterThan(0)
        for (const body of found) expect(body.data.metadata, type).toEqual(metadata)
      }
      const second = bodies.find((b) => b.type === "proof.canceled" || (b.type === "proof.completed" && b.data.proof_id === queued.json.proof_id))
      expect(second?.data.metadata).toEqual({ order: "o2" })

      const listed = (yield* call("GET", "/api/v1/events?limit=100")).json.events as Array<{ type: string; data: { metadata: unknown; name?: string } }>
      // The bootstrap key, made before the webhook and without metadata, has its own key.created.
      expect(listed.find((e) => e.type === "key.created" && e.data.name === "bootstrap")?.data.metadata).toEqual({})
      for (const [type, metadata] of Object.entries(expected)) {
        const found = listed.filter((e) => e.type === type && e.data.name !== "bootstrap")
        expect(found.length, type).toBeGreaterThan(0)
        for (const event of found) expect(event.data.metadata, type).toEqual(metadata)
      }
    }), 60_000)
})
