import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { allBut, createProof, detailPaths, expectRequestId, ISO, keyWithScopes, MULTIPLIER, type Harness } from "../helpers.js"
import { expectEnvelope, makeHarness, type Reply } from "../support.js"

let h: Harness
beforeAll(async () => {
  h = await makeHarness()
})
afterAll(() => h.close())

const R = "21888242871839275222246405745257275088548364400416034343698204186575808495617"
const POLICY = `"key";q=60;w=60, "daily";q=5000;w=86400`
const PROOF_FIELDS = [
  "canceled_at",
  "circuit",
  "circuit_version",
  "completed_at",
  "created_at",
  "deadline_at",
  "duration_ms",
  "error",
  "expires_at",
  "finished_at",
  "metadata",
  "priority",
  "proof_blob",
  "proof_id",
  "proving_ms",
  "proving_system",
  "public_inputs",
  "queue_position",
  "queued_at",
  "started_at",
  "status",
  "type"
]

const rateLimit = (reply: Reply) => {
  const match = /^"(key|daily)";r=(\d+);t=(\d+)$/.exec(reply.headers.get("ratelimit") ?? "")
  if (match === null) throw new Error(`no RateLimit header: ${reply.headers.get("ratelimit")}`)
  return { policy: match[1], remaining: Number(match[2]), reset: Number(match[3]) }
}

/** Fixed one-minute windows on the clock: start a minute-sized test well inside one. */
const awayFromMinuteBoundary = async () => {
  const into = Date.now() % 60_000
  if (into > 45_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - into + 200))
}

const listTotal = async (token: string) => {
  const reply = await h.call("GET", "/api/v1/proofs", { token })
  expect(reply.status).toBe(200)
  return reply.json.total as number
}

describe("POST /api/v1/proofs", () => {
  it("202 with a queued record and the RateLimit headers", async () => {
    await awayFromMinuteBoundary()
    const { key } = await h.newAccount()
    const reply = await h.call("POST", "/api/v1/proofs", { token: key, body: MULTIPLIER })
    expect(reply.status).toBe(202)
    expectRequestId(reply)
    expect(Object.keys(reply.json).sort()).toEqual(PROOF_FIELDS)
    expect(reply.json).toMatchObject({
      type: "multiplier",
      circuit: "multiplier",
      status: "queued",
      proof_blob: null,
      error: null,
      duration_ms: null,
      completed_at: null
    })
    expect(reply.json.proof_id).toMatch(/^proof_/)
    expect(reply.json.created_at).toMatch(ISO)
    expect(reply.headers.get("ratelimit-policy")).toBe(POLICY)
    const first = rateLimit(reply)
    expect(first.policy).toBe("key")
    expect(first.remaining).toBe(59)
    expect(first.reset).toBeGreaterThanOrEqual(1)
    expect(first.reset).toBeLessThanOrEqual(60)
    const second = await h.call("POST", "/api/v1/proofs", { token: key, body: { type: "range", inputs: { value: "5", min: 1, max: "10" } } })
    expect(second.status).toBe(202)
    expect(second.json.public_inputs).toEqual({ min: "1", max: "10" })
    expect(rateLimit(second).remaining).toBe(58)
  })

  it("accepts large field values as decimal strings", async () => {
    const { key } = await h.newAccount()
    const reply = await h.call("POST", "/api/v1/proofs", {
      token: key,
      body: { type: "hash_preimage", inputs: { preimage: (BigInt(R) - 1n).toString(), hash: "12345" } }
    })
    expect(reply.status).toBe(202)
    expect(reply.json.public_inputs).toEqual({ hash: "12345" })
  })

  const invalid: Array<[string, unknown, string]> = [
    ["an unknown type", { type: "sudoku", inputs: { a: 1 } }, "type"],
    ["a missing type", { inputs: { a: 1, b: 2 } }, "type"],
    ["missing inputs", { type: "multiplier" }, "inputs"],
    ["a missing input", { type: "multiplier", inputs: { a: 3 } }, "inputs.b"],
    ["an extra input", { type: "multiplier", inputs: { a: 3, b: 4, c: 12 } }, "inputs.c"],
    ["an extra top-level field", { ...MULTIPLIER, note: "x" }, "note"],
    ["a non-integer input", { type: "multiplier", inputs: { a: 1.5, b: 4 } }, "inputs.a"],
    ["a non-numeric string input", { type: "multiplier", inputs: { a: "abc", b: 4 } }, "inputs.a"],
    ["a negative number", { type: "multiplier", inputs: { a: -3, b: 4 } }, "inputs.a"],
    ["a negative string", { type: "multiplier", inputs: { a: "-3", b: 4 } }, "inputs.a"],
    ["an out-of-field value", { type: "multiplier", inputs: { a: R, b: 4 } }, "inputs.a"],
    ["an out-of-range uint64", { type: "range", inputs: { value: (2n ** 64n).toString(), min: 0, max: 1 } }, "inputs.value"],
    ["an unsafe JSON number", { type: "multiplier", inputs: { a: 2 ** 60, b: 4 } }, "inputs.a"],
    ["a boolean input", { type: "multiplier", inputs: { a: true, b: 4 } }, "inputs.a"],
    ["an array for a scalar input", { type: "multiplier", inputs: { a: [1], b: 4 } }, "inputs.a"],
    ["a wrong-length array input", {
      type: "merkle_membership",
      inputs: { secret: 1, path_elements: [1, 2], path_indices: Array(20).fill(0), root: 5 }
    }, "inputs.path_elements"],
    ["a non-bit in a bit array", {
      type: "merkle_membership",
      inputs: { secret: 1, path_elements: Array(20).fill(1), path_indices: [2, ...Array(19).fill(0)], root: 5 }
    }, "inputs.path_indices"],
    ["an array body", [MULTIPLIER], ""],
    ["a string type that is a number", { type: 7, inputs: { a: 1, b: 2 } }, "type"]
  ]
  for (const [name, body, path] of invalid) {
    it(`${name} is 400 invalid_request and queues nothing`, async () => {
      const { key } = await h.newAccount()
      const reply = await h.call("POST", "/api/v1/proofs", { token: key, body })
      expectEnvelope(reply, 400, "invalid_request")
      if (path !== "") expect(detailPaths(reply).some((p) => p === path || p.startsWith(`${path}.`))).toBe(true)
      expect(await listTotal(key)).toBe(0)
    })
  }

  it("refused requests (400, 403) cost nothing; a batch counts one request against the key's minute", async () => {
    await awayFromMinuteBoundary()
    const { key } = await h.newAccount()
    const reader = await keyWithScopes(h, key, ["proofs:read"], "reader")
    expectEnvelope(await h.call("POST", "/api/v1/proofs", { token: key, body: { type: "nope", inputs: {} } }), 400, "invalid_request")
    expectEnvelope(await h.call("POST", "/api/v1/proofs/batch", { token: key, body: { proofs: [MULTIPLIER, { type: "nope", inputs: {} }] } }), 400, "invalid_request")
    expectEnvelope(await h.call("POST", "/api/v1/proofs", { token: reader, body: MULTIPLIER }), 403, "insufficient_scope")
    const batch = await h.call("POST", "/api/v1/proofs/batch", { token: key, body: { proofs: [MULTIPLIER, MULTIPLIER, MULTIPLIER] } })
    expect(batch.status).toBe(202)
    expect(rateLimit(batch)).toMatchObject({ policy: "key", remaining: 59 })
    const single = await h.call("POST", "/api/v1/proofs", { token: key, body: MULTIPLIER })
    expect(rateLimit(single)).toMatchObject({ policy: "key", remaining: 58 })
    expect(await listTotal(key)).toBe(4)
  })

  it("malformed JSON and a missing body are 400 invalid_request", async () => {
    const { key } = await h.newAccount()
    expectEnvelope(await h.call("POST", "/api/v1/proofs", { token: key, body: "{\"type\": \"multiplier\"" }), 400, "invalid_request")
    expectEnvelope(await h.call("POST", "/api/v1/proofs", { token: key }), 400, "invalid_request")
    expect(await listTotal(key)).toBe(0)
  })

  it("the 61st proof request of a key within a minute is 429 rate_limit_exceeded with Retry-After and RateLimit", async () => {
    await awayFromMinuteBoundary()
    const { key } = await h.newAccount()
    for (let i = 1; i <= 60; i++) {
      const reply = await h.call("POST", "/api/v1/proofs", { token: key, body: MULTIPLIER })
      expect(reply.status).toBe(202)
      expect(rateLimit(reply).remaining).toBe(60 - i)
    }
    const limited = await h.call("POST", "/api/v1/proofs", { token: key, body: MULTIPLIER })
    expectEnvelope(limited, 429, "rate_limit_exceeded")
    const retryAfter = Number(limited.headers.get("retry-after"))
    expect(Number.isInteger(retryAfter)).toBe(true)
    expect(retryAfter).toBeGreaterThanOrEqual(1)
    expect(retryAfter).toBeLessThanOrEqual(60)
    expect(limited.headers.get("ratelimit-policy")).toBe(POLICY)
    expect(rateLimit(limited)).toMatchObject({ policy: "key", remaining: 0 })
    expect(rateLimit(limited).reset).toBe(retryAfter)
    expect(limited.json.error.message).toMatch(/key|minute/i)
    // The batch endpoint shares the key's budget; a verify is charged only when it runs, so that of
    // a still-queued proof is its plain 409.
    expectEnvelope(await h.call("POST", "/api/v1/proofs/batch", { token: key, body: { proofs: [MULTIPLIER] } }), 429, "rate_limit_exceeded")
    const listed = await h.call("GET", "/api/v1/proofs?limit=100", { token: key })
    expectEnvelope(await h.call("GET", `/api/v1/proofs/${listed.json.proofs[0].proof_id}/verify`, { token: key }), 409, "proof_not_ready")
    // Nothing more was queued, and another key of the same account still has its own minute budget.
    expect(listed.json.total).toBe(60)
    const other = await keyWithScopes(h, key, ["proofs:write", "proofs:read"], "other")
    const fresh = await h.call("POST", "/api/v1/proofs", { token: other, body: MULTIPLIER })
    expect(fresh.status).toBe(202)
    expect(rateLimit(fresh).remaining).toBe(59)
  })
})

describe("the daily quota", () => {
  it("5,000 proofs a UTC day per account; a batch that does not fit is refused whole; another key does not help", async () => {
    const { key } = await h.newAccount()
    const other = await keyWithScopes(h, key, ["proofs:write", "proofs:read"], "other")
    const hundred = { proofs: Array(100).fill(MULTIPLIER) }
    for (let i = 0; i < 49; i++) expect((await h.call("POST", "/api/v1/proofs/batch", { token: i % 2 === 0 ? key : other, body: hundred })).status).toBe(202)
    const almost = await h.call("POST", "/api/v1/proofs/batch", { token: key, body: { proofs: Array(99).fill(MULTIPLIER) } })
    expect(almost.status).toBe(202)
    expect(rateLimit(almost)).toMatchObject({ policy: "daily", remaining: 1 })

    const tooBig = await h.call("POST", "/api/v1/proofs/batch", { token: other, body: { proofs: [MULTIPLIER, MULTIPLIER] } })
    expectEnvelope(tooBig, 429, "rate_limit_exceeded")
    expect(tooBig.json.error.message).toMatch(/daily/i)
    expect(tooBig.headers.get("ratelimit-policy")).toBe(POLICY)
    const retryAfter = Number(tooBig.headers.get("retry-after"))
    expect(retryAfter).toBeGreaterThanOrEqual(1)
    expect(retryAfter).toBeLessThanOrEqual(86_400)
    expect(await listTotal(key)).toBe(4_999)

    const last = await h.call("POST", "/api/v1/proofs", { token: other, body: MULTIPLIER })
    expect(last.status).toBe(202)
    expect(rateLimit(last)).toMatchObject({ policy: "daily", remaining: 0 })
    for (const token of [key, other]) {
      const refused = await h.call("POST", "/api/v1/proofs", { token, body: MULTIPLIER })
      expectEnvelope(refused, 429, "rate_limit_exceeded")
      expect(refused.headers.get("retry-after")).not.toBeNull()
    }
    expect(await listTotal(key)).toBe(5_000)
    // Another account is unaffected.
    const fresh = await h.newAccount()
    expect((await h.call("POST", "/api/v1/proofs", { token: fresh.key, body: MULTIPLIER })).status).toBe(202)
  })
})

describe("POST /api/v1/proofs/batch", () => {
  it("202 {batch_id, proofs} with every proof queued", async () => {
    const { key } = await h.newAccount()
    const items = [MULTIPLIER, { type: "range", inputs: { value: 5, min: 1, max: 10 } }, { type: "multiplier", inputs: { a: "7", b: "9" } }]
    const reply = await h.call("POST", "/api/v1/proofs/batch", { token: key, body: { proofs: items } })
    expect(reply.status).toBe(202)
    expectRequestId(reply)
    expect(Object.keys(reply.json).sort()).toEqual(["batch_id", "metadata", "proofs"])
    expect(reply.json.batch_id).toMatch(/^batch_/)
    expect(reply.json.proofs).toHaveLength(3)
    expect(reply.json.proofs.map((p: { type: string }) => p.type)).toEqual(["multiplier", "range", "multiplier"])
    expect(reply.json.proofs.every((p: { status: string; proof_id: string }) => p.status === "queued" && p.proof_id.startsWith("proof_"))).toBe(true)
    expect(reply.headers.get("ratelimit-policy")).toBe(POLICY)
    expect(rateLimit(reply).remaining).toBeLessThanOrEqual(59)
    expect(await listTotal(key)).toBe(3)
  })

  it("100 items are accepted", async () => {
    const { key } = await h.newAccount()
    const reply = await h.call("POST", "/api/v1/proofs/batch", { token: key, body: { proofs: Array(100).fill(MULTIPLIER) } })
    expect(reply.status).toBe(202)
    expect(reply.json.proofs).toHaveLength(100)
    expect(await listTotal(key)).toBe(100)
  })

  it("is all or nothing: one bad item is 400 with details[].path naming its index, and nothing is queued", async () => {
    const { key } = await h.newAccount()
    const items = [MULTIPLIER, MULTIPLIER, { type: "multiplier", inputs: { a: 1.5, b: 2 } }, MULTIPLIER, { type: "nope", inputs: {} }]
    const reply = await h.call("POST", "/api/v1/proofs/batch", { token: key, body: { proofs: items } })
    expectEnvelope(reply, 400, "invalid_request")
    const paths = detailPaths(reply)
    expect(paths.some((p) => p.startsWith("proofs.2."))).toBe(true)
    expect(paths.some((p) => p.startsWith("proofs.4."))).toBe(true)
    expect(paths.some((p) => /^proofs\.[013]\./.test(p))).toBe(false)
    expect(await listTotal(key)).toBe(0)
  })

  it("an extra field inside an item is named by its index", async () => {
    const { key } = await h.newAccount()
    const reply = await h.call("POST", "/api/v1/proofs/batch", { token: key, body: { proofs: [MULTIPLIER, { ...MULTIPLIER, x: 1 }] } })
    expectEnvelope(reply, 400, "invalid_request")
    expect(detailPaths(reply)).toContain("proofs.1.x")
    expect(await listTotal(key)).toBe(0)
  })

  for (const [name, body] of [
    ["101 items", { proofs: Array(101).fill(MULTIPLIER) }],
    ["0 items", { proofs: [] }],
    ["no proofs field", {}],
    ["proofs not an array", { proofs: MULTIPLIER }],
    ["an extra top-level field", { proofs: [MULTIPLIER], note: "x" }],
    ["an array body", [MULTIPLIER]]
  ] as Array<[string, unknown]>) {
    it(`${name} is 400 invalid_request and queues nothing`, async () => {
      const { key } = await h.newAccount()
      expectEnvelope(await h.call("POST", "/api/v1/proofs/batch", { token: key, body }), 400, "invalid_request")
      expect(await listTotal(key)).toBe(0)
    })
  }
})

describe("GET /api/v1/proofs and /api/v1/proofs/:id", () => {
  it("lists the account's proofs newest first, with ?status= and paging; gets one by id", async () => {
    const { key } = await h.newAccount()
    const ids: Array<string> = []
    for (let i = 0; i < 3; i++) ids.unshift((await createProof(h, key)).proof_id)
    const listed = await h.call("GET", "/api/v1/proofs", { token: key })
    expect(listed.status).toBe(200)
    expectRequestId(listed)
    expect(Object.keys(listed.json).sort()).toEqual(["has_more", "proofs", "total"])
    expect(listed.json.proofs.map((p: { proof_id: string }) => p.proof_id)).toEqual(ids)
    expect(listed.json).toMatchObject({ total: 3, has_more: false })
    expect(listed.headers.get("ratelimit")).toBeNull()

    const queued = await h.call("GET", "/api/v1/proofs?status=queued", { token: key })
    expect(queued.json.total).toBe(3)
    const completed = await h.call("GET", "/api/v1/proofs?status=completed", { token: key })
    expect(completed.status).toBe(200)
    expect(completed.json).toEqual({ proofs: [], total: 0, has_more: false })

    const page = await h.call("GET", `/api/v1/proofs?limit=1&starting_after=${ids[0]}`, { token: key })
    expect(page.json.proofs.map((p: { proof_id: string }) => p.proof_id)).toEqual([ids[1]])
    expect(page.json.has_more).toBe(true)

    const one = await h.call("GET", `/api/v1/proofs/${ids[1]}`, { token: key })
    expect(one.status).toBe(200)
    expect(Object.keys(one.json).sort()).toEqual(PROOF_FIELDS)
    expect(one.json).toMatchObject({ proof_id: ids[1], status: "queued" })
  })

  for (const query of ["status=done", "limit=0", "limit=101", "limit=x"]) {
    it(`?${query} is 400 invalid_request`, async () => {
      const { key } = await h.newAccount()
      expectEnvelope(await h.call("GET", `/api/v1/proofs?${query}`, { token: key }), 400, "invalid_request")
    })
  }

  it("?limit= outside 1 to 100, a fraction or a word: one sentence saying what a page size is", async () => {
    const { key } = await h.newAccount()
    for (const limit of ["0", "1000", "2.5", "ten", ""]) {
      const reply = await h.call("GET", `/api/v1/proofs?limit=${limit}`, { token: key })
      expectEnvelope(reply, 400, "invalid_request")
      expect([limit, reply.json.error.details]).toEqual([limit, [{ path: "limit", message: "must be an integer from 1 to 100" }]])
      expect(reply.json.error.message).toBe("Invalid request: limit: must be an integer from 1 to 100")
    }
  })

  it("unknown, malformed and another account's ids are 404 proof_not_found on get and verify", async () => {
    const a = await h.newAccount("A")
    const b = await h.newAccount("B")
    const theirs = await createProof(h, b.key)
    const unknown = theirs.proof_id.slice(0, -4) + (theirs.proof_id.endsWith("0000") ? "1111" : "0000")
    for (const id of [theirs.proof_id, unknown, "nope", "proof_"]) {
      expectEnvelope(await h.call("GET", `/api/v1/proofs/${id}`, { token: a.key }), 404, "proof_not_found")
      expectEnvelope(await h.call("GET", `/api/v1/proofs/${id}/verify`, { token: a.key }), 404, "proof_not_found")
    }
  })

  it("verify of a queued proof is 409 proof_not_ready and costs nothing against the key's minute", async () => {
    await awayFromMinuteBoundary()
    const { key } = await h.newAccount()
    const { proof_id } = await createProof(h, key)
    expectEnvelope(await h.call("GET", `/api/v1/proofs/${proof_id}/verify`, { token: key }), 409, "proof_not_ready")
    const next = await h.call("POST", "/api/v1/proofs", { token: key, body: MULTIPLIER })
    expect(rateLimit(next).remaining).toBe(58)
  })

  // A verify is metered only when it runs: the 409 of an unfinished proof is not charged, so it
  // carries no RateLimit fields (every metered response does).
  it("the 409 of an unfinished proof's verify is not metered", async () => {
    const { key } = await h.newAccount()
    const { proof_id } = await createProof(h, key)
    const reply = await h.call("GET", `/api/v1/proofs/${proof_id}/verify`, { token: key })
    expectEnvelope(reply, 409, "proof_not_ready")
    expect(reply.headers.get("ratelimit")).toBeNull()
  })
})

describe("proofs: authentication and scopes", () => {
  it("401 invalid_api_key without or with a bad key on every proof and circuit endpoint", async () => {
    const { key } = await h.newAccount()
    const { proof_id } = await createProof(h, key)
    const calls: Array<[string, string, unknown]> = [
      ["POST", "/api/v1/proofs", MULTIPLIER],
      ["POST", "/api/v1/proofs/batch", { proofs: [MULTIPLIER] }],
      ["GET", "/api/v1/proofs", undefined],
      ["GET", `/api/v1/proofs/${proof_id}`, undefined],
      ["GET", `/api/v1/proofs/${proof_id}/verify`, undefined],
      ["GET", `/api/v1/proofs/${proof_id}/calldata`, undefined],
      ["GET", "/api/v1/circuits", undefined],
      ["GET", "/api/v1/circuits/multiplier", undefined],
      ["GET", "/api/v1/circuits/multiplier/verifier.sol", undefined],
      ["DELETE", "/api/v1/circuits/multiplier", undefined]
    ]
    for (const token of [undefined, "", "bearer-nonsense", "mzk_" + "z".repeat(49)]) {
      for (const [method, path, body] of calls) {
        expectEnvelope(await h.call(method, path, { token, body }), 401, "invalid_api_key")
      }
    }
    expect(await listTotal(key)).toBe(1)
  })

  it("403 insufficient_scope: create and batch need proofs:write; list, get, verify and calldata need proofs:read", async () => {
    const { key } = await h.newAccount()
    const { proof_id } = await createProof(h, key)
    const noWrite = await keyWithScopes(h, key, allBut("proofs:write"), "no-write")
    const noRead = await keyWithScopes(h, key, allBut("proofs:read"), "no-read")
    for (const token of [noWrite, await keyWithScopes(h, key, ["proofs:read"], "reader")]) {
      expectEnvelope(await h.call("POST", "/api/v1/proofs", { token, body: MULTIPLIER }), 403, "insufficient_scope")
      expectEnvelope(await h.call("POST", "/api/v1/proofs/batch", { token, body: { proofs: [MULTIPLIER] } }), 403, "insufficient_scope")
    }
    for (const token of [noRead, await keyWithScopes(h, key, ["proofs:write"], "writer")]) {
      expectEnvelope(await h.call("GET", "/api/v1/proofs", { token }), 403, "insufficient_scope")
      expectEnvelope(await h.call("GET", `/api/v1/proofs/${proof_id}`, { token }), 403, "insufficient_scope")
      expectEnvelope(await h.call("GET", `/api/v1/proofs/${proof_id}/verify`, { token }), 403, "insufficient_scope")
      expectEnvelope(await h.call("GET", `/api/v1/proofs/${proof_id}/calldata`, { token }), 403, "insufficient_scope")
    }
    expect(await listTotal(key)).toBe(1)
  })
})
