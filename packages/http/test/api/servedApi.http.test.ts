import { DeliveriesRepo, encodeProofBlob, now, ProofsRepo, SCOPES, timestampFromMillis } from "@mzk/core"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  allBut,
  circomParts,
  createProof,
  createWebhook,
  type Harness,
  keyWithScopes,
  multipart,
  MULTIPLIER,
  type ScopeName,
  settled,
  uploadCircuit
} from "../helpers.js"
import { makeHarness, type Reply } from "../support.js"

/**
 * The served API against its own OpenAPI document: every documented path and method is asked in
 * the ways a client can get it wrong or right, over a real port, and every answer's status must be
 * one the document lists for that operation. The document is read from the server, not rebuilt.
 */
let h: Harness
let doc: any
let key: string
const ids: Record<string, string> = {}
/** Per scope, a key of the account holding every other scope. */
const keysWithout: Partial<Record<ScopeName, string>> = {}

beforeAll(async () => {
  h = await makeHarness()
  key = (await h.newAccount("Documented")).key
  doc = (await h.call("GET", "/api/v1/openapi.json")).json
  const webhook = await createWebhook(h, key)
  ids.webhooks = webhook.id
  // A test event, its delivery settled straight in storage (no delivery engine runs here), so a retry can queue it again.
  const tested = (await h.call("POST", `/api/v1/webhooks/${webhook.id}/test`, { token: key })).json
  ids.events = tested.event.id
  ids.deliveries = tested.delivery.id
  await h.run(Effect.gen(function*() {
    const repo = yield* DeliveriesRepo
    const at = yield* now
    const [claimed] = yield* repo.claimDue({ now: at, limit: 1, maxPerWebhook: 1, leaseUntil: timestampFromMillis(Date.parse(at) + 60_000), excludeWebhooks: [] })
    yield* repo.recordAttempt({
      id: "att_01jd0000000000000000000000" as never,
      account_id: claimed!.account_id,
      delivery_id: claimed!.id,
      webhook_id: claimed!.webhook_id,
      event_id: claimed!.event_id,
      event_type: "webhook.test",
      attempt: 1,
      trigger: "manual",
      attempted_at: at,
      outcome: "failed",
      status_code: 500,
      error: null,
      latency_ms: 1,
      response_body: null
    }, { status: "failed", next_attempt_at: null, first_failed_at: at }, claimed!.lease_expires_at!)
  }))
  ids.recoveries = (await h.call("POST", `/api/v1/webhooks/${webhook.id}/recover`, { token: key, body: { since: new Date().toISOString() } })).json.id
  ids.proofs = (await createProof(h, key)).proof_id
  // Settled straight in storage (no proof worker runs here), so verify has a completed proof to check.
  await h.run(Effect.gen(function*() {
    const repo = yield* ProofsRepo
    const at = yield* now
    const [claimed] = yield* repo.claimNext({ now: at, leaseUntil: at, maxRunningPerAccount: 10, limit: 1 })
    yield* repo.complete(claimed!.id, claimed!.attempts, {
      proof_blob: encodeProofBlob({ pi_a: ["1", "2", "1"], pi_b: [["3", "4"], ["5", "6"], ["1", "0"]], pi_c: ["7", "8", "1"], protocol: "groth16", curve: "bn128" }),
      public_inputs: { c: "33" },
      duration_ms: 1,
      completed_at: at,
      expires_at: at
    })
  }))
  // Queued ones, for the cancels (the one above is completed for verify).
  ids.cancelable = (await createProof(h, key)).proof_id
  ids.batches = (await h.call("POST", "/api/v1/proofs/batch", { token: key, body: { proofs: [MULTIPLIER, MULTIPLIER] } })).json.batch_id
  const other = await h.call("POST", "/api/v1/keys", { token: key, body: { name: "other" } })
  ids.keys = other.json.id
  ids["verification-keys"] = (await h.call("POST", "/api/v1/verification-keys", { token: key, body: { proving_system: "groth16", verification_key: FAKE_KEY } })).json.id
  // An own circuit, ready, so that its verifier answers and DELETE (run last) removes it.
  ids.circuits = (await uploadCircuit(h, key, circomParts("documented"))).name
  await settled(h, key, ids.circuits)
  // In accounts of their own, a new one every 9 keys, so the documented one keeps room under its 10
  // active keys; the scope is checked before any handler looks the resource up.
  let scoped = ""
  for (const [i, scope] of SCOPES.entries()) {
    if (i % 9 === 0) scoped = (await h.newAccount(`Scoped ${i / 9}`)).key
    keysWithout[scope] = await keyWithScopes(h, scoped, allBut(scope), `without-${scope.replace(":", "-")}`)
  }
})
afterAll(() => h.close())

interface Operation {
  readonly method: string
  readonly template: string
  readonly statuses: ReadonlyArray<string>
  readonly scope: ScopeName | undefined
  readonly hasBody: boolean
  readonly metered: boolean
}

/** Every documented operation; deletions last, so the ids they remove serve the others first. */
const operations = (): Array<Operation> =>
  Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([template, methods]) =>
    Object.entries(methods).map(([method, op]) => ({
      method: method.toUpperCase(),
      template,
      statuses: Object.keys(op.responses),
      scope: op["x-mzk-scope"],
      hasBody: op.requestBody !== undefined,
      metered: op["x-mzk-metered"] === true
    }))
  ).sort((a, b) => Number(a.method === "DELETE") - Number(b.method === "DELETE"))

/** Which of `ids` fills each path parameter; `id` and `name` are the id of the resource the path names. */
const PARAMETER_IDS: Record<string, string> = { batch_id: "batches", delivery_id: "deliveries", recovery_id: "recoveries" }

/**
 * The path with its parameters filled: real ids of the resources the path names (a queued proof's
 * for a cancel), or missing ones.
 */
const pathOf = (op: Operation, real: boolean) =>
  op.template.replace(/\{(\w+)\}/g, (_, parameter: string) => {
    if (!real) return "nope"
    // A download's kind: the verification key, which every ready circuit has.
    if (parameter === "kind") return "verification_key"
    const resource = PARAMETER_IDS[parameter]
    if (resource !== undefined) return ids[resource]!
    return op.template.endsWith("/cancel") ? ids.cancelable! : ids[op.template.split("/")[3]!]!
  })

/** The request body of an upload operation (multipart/form-data), as `h.call` options. */
const isUpload = (op: Operation) => doc.paths[op.template][op.method.toLowerCase()].requestBody?.content["multipart/form-data"] !== undefined

/** A valid body for each operation that takes one (with its headers for an upload). */
const validRequest = (op: Operation): { body?: unknown; headers?: Record<string, string> } =>
  !op.hasBody ? {} : isUpload(op) ? multipart(circomParts(`up-${Math.random().toString(36).slice(2, 8)}`)) : { body: validBody(op) }

/** A body of the right kind that fails validation. */
const invalidRequest = (op: Operation) =>
  isUpload(op) ? multipart([...circomParts("x"), { name: "unexpected", value: "true" }]) : { body: { unexpected: true } }

/** A key `FakeVerifier` (the test core's) accepts. */
const FAKE_KEY = { protocol: "groth16", curve: "bn128", nPublic: 1 }

const validBody = (op: Operation): unknown => {
  switch (`${op.method} ${op.template}`) {
    case "POST /api/v1/keys":
      return { name: `made-${Math.random().toString(36).slice(2, 8)}`, scopes: ["keys:read"] }
    case "POST /api/v1/keys/{id}/roll":
      return { expires_in: 60 }
    case "POST /api/v1/webhooks":
      return { url: "https://hooks.example.com/documented", events: ["proof.completed"] }
    case "PATCH /api/v1/webhooks/{id}":
      return { description: "changed" }
    case "POST /api/v1/webhooks/{id}/recover":
      return { since: new Date(Date.now() - 60_000).toISOString() }
    case "POST /api/v1/webhooks/{id}/rotate-secret":
      return { expires_in: 60, force: true }
    case "POST /api/v1/proofs":
      return MULTIPLIER
    case "POST /api/v1/proofs/batch":
      return { proofs: [MULTIPLIER] }
    case "POST /api/v1/verifications":
      return { proving_system: "groth16", verification_key: FAKE_KEY, proof: { protocol: "groth16" }, public_signals: ["33"] }
    case "POST /api/v1/verification-keys":
      return { proving_system: "groth16", verification_key: FAKE_KEY }
    default:
      throw new Error(`no valid body for ${op.method} ${op.template}`)
  }
}

const seen = new Map<string, Set<string>>()
const expectDocumented = (op: Operation, reply: Reply, probe: string) => {
  const label = `${op.method} ${op.template} (${probe})`
  expect(op.statuses, `${label} answered ${reply.status} ${reply.text.slice(0, 200)}`).toContain(String(reply.status))
  const statuses = seen.get(`${op.method} ${op.template}`) ?? new Set()
  statuses.add(String(reply.status))
  seen.set(`${op.method} ${op.template}`, statuses)
}

describe("the served API against its OpenAPI document", () => {
  it("documents every operation of the API", () => {
    expect(operations().length).toBe(41)
  })

  it("answers every documented operation, however it is asked, with a status the document lists for it", async () => {
    for (const op of operations()) {
      const body = validRequest(op)
      expectDocumented(op, await h.call(op.method, pathOf(op, true), { ...body }), "no key")
      expectDocumented(op, await h.call(op.method, pathOf(op, true), { token: "mzk_not-a-key", ...body }), "a malformed key")
      if (op.scope !== undefined) {
        expectDocumented(op, await h.call(op.method, pathOf(op, true), { token: keysWithout[op.scope], ...body }), "a key without its scope")
      }
      expectDocumented(op, await h.call(op.method, pathOf(op, false), { token: key, ...body }), "an unknown id")
      if (op.hasBody) {
        expectDocumented(op, await h.call(op.method, pathOf(op, true), { token: key, ...invalidRequest(op) }), "an invalid body")
        expectDocumented(op, await h.call(op.method, pathOf(op, true), { token: key, body: "{not json" }), "malformed JSON")
        expectDocumented(
          op,
          await h.call(op.method, pathOf(op, true), { token: key, body: "a=1", headers: { "content-type": "application/x-www-form-urlencoded" } }),
          "a form body"
        )
        expectDocumented(op, await h.call(op.method, pathOf(op, true), { token: key, body: "x".repeat(1024 * 1024 + 1) }), "a body over 1 MiB")
      }
      expectDocumented(op, await h.call(op.method, `${pathOf(op, true)}?limit=0`, { token: key, ...body }), "a bad query")
      expectDocumented(op, await h.call(op.method, pathOf(op, true), { token: key, ...validRequest(op) }), "a valid request")
    }
    // A metered operation asked past its limit: the 429 must be documented too.
    const metered = operations().find((op) => op.metered && op.method === "POST" && op.template === "/api/v1/proofs")!
    const { key: limited } = await h.newAccount("Limited")
    let reply: Reply
    let sent = 0
    do reply = await h.call("POST", "/api/v1/proofs", { token: limited, body: MULTIPLIER })
    while (reply.status === 202 && ++sent <= 60)
    expectDocumented(metered, reply, "past the rate limit")
    expect(reply.status).toBe(429)
    // The probes reached the statuses that matter on every operation, so the check above had teeth.
    for (const op of operations()) {
      const statuses = seen.get(`${op.method} ${op.template}`)!
      expect([...statuses].filter((s) => s.startsWith("2")).length, `${op.method} ${op.template} never succeeded`).toBe(1)
      expect(statuses.has("401"), `${op.method} ${op.template}`).toBe(true)
      if (op.scope !== undefined) expect(statuses.has("403"), `${op.method} ${op.template}`).toBe(true)
      if (op.hasBody) expect([...statuses].filter((s) => ["400", "413", "415"].includes(s)).length).toBe(3)
    }
  })

  it("lists 401/403/404/405/413/415/429 where they can occur, and each operation's scope", () => {
    for (const op of operations()) {
      const label = `${op.method} ${op.template}`
      expect(op.statuses, label).toEqual(expect.arrayContaining(["400", "401", "404", "405", "413", "415", "500", "503"]))
      if (op.scope !== undefined) {
        expect(op.statuses, label).toContain("403")
        const security = doc.paths[op.template][op.method.toLowerCase()].security
        expect(security, label).toEqual([{ bearer: [op.scope] }])
        expect(doc.paths[op.template][op.method.toLowerCase()].description, label).toContain(`Scope: ${op.scope}.`)
      }
      expect(op.statuses.includes("429"), label).toBe(op.metered)
    }
    const scoped = operations().filter((op) => op.scope !== undefined).map((op) => `${op.method} ${op.template}`)
    expect(scoped.length).toBe(41)
    expect(operations().filter((op) => op.metered).map((op) => `${op.method} ${op.template}`).sort()).toEqual([
      "GET /api/v1/proofs/{id}/verify",
      "POST /api/v1/proofs",
      "POST /api/v1/proofs/batch",
      "POST /api/v1/verification-keys",
      "POST /api/v1/verifications"
    ])
  })
})
