import { DEFAULT_LIMITS, EventsRepo, Limits, ProofLoops, ProofsRepo, ProofWorker, timestampFromMillis } from "@mzk/core"
import { eventually, FakeProver, SqliteMemoryStore, testCore } from "@mzk/testkit"
import { Effect, Layer, ManagedRuntime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { allBut, createProof, createWebhook, expectRequestId, ISO, keyWithScopes, MULTIPLIER, type Harness } from "../helpers.js"
import { coreWithBuilds, expectEnvelope, harnessOver, type Reply } from "../support.js"

/** Storage lists newest first; this file reads events in the order they happened. */
const oldestFirst = <A>(items: ReadonlyArray<A>): Array<A> => [...items].reverse()

/** Proven in 10 minutes by this harness's fake prover: it stays running while a test looks. */
const LONG = { type: "multiplier", inputs: { a: 3, b: 7 } }
/** Fails at once (a constraint of the multiplier circuit: a factor of 1). */
const FAILING = { type: "multiplier", inputs: { a: 1, b: 5 } }
/** Small enough to reach in a test: a refund shows as room for one more proof. */
const DAILY = 6
const RUNNING_PER_ACCOUNT = 2

/**
 * The API over a core whose proof worker runs (as `mzk serve` does), on the fake prover: MULTIPLIER
 * proofs complete at once, LONG ones take 10 minutes. Two proofs of an account run at once, so a
 * third waits queued; an account may request 6 proofs a day.
 */
const runtime = ManagedRuntime.make(
  ProofLoops.pipe(
    Layer.provideMerge(coreWithBuilds(testCore(SqliteMemoryStore, {
      prover: FakeProver({ capacity: 50, duration: ({ inputs }) => (inputs.b === "7" ? "10 minutes" : "20 millis") })
    }))),
    Layer.provideMerge(Layer.succeed(Limits, { ...DEFAULT_LIMITS, proofsPerDayPerAccount: DAILY, maxRunningProofsPerAccount: RUNNING_PER_ACCOUNT }))
  )
)

let h: Harness
beforeAll(async () => {
  h = await harnessOver(runtime)
})
afterAll(() => h.close())

const PROOF_FIELDS = [
  "canceled_at", "circuit", "circuit_version", "completed_at", "created_at", "deadline_at", "duration_ms", "error", "expires_at", "finished_at", "metadata",
  "priority", "proof_blob", "proof_id", "proving_ms", "proving_system", "public_inputs", "queue_position", "queued_at", "started_at", "status", "type"
]

const statusOf = async (token: string, id: string) => (await h.call("GET", `/api/v1/proofs/${id}`, { token })).json.status as string

/** Polls until the proof is in `status`. */
const reaches = (token: string, id: string, status: string) =>
  eventually(async () => ((await statusOf(token, id)) === status ? true : undefined), 10_000)

/** An account with two LONG proofs running and a third queued behind them. */
const busyAccount = async (name: string) => {
  const { account, key } = await h.newAccount(name)
  const running = [(await createProof(h, key, LONG)).proof_id, (await createProof(h, key, LONG)).proof_id]
  const queued = (await createProof(h, key, LONG)).proof_id
  for (const id of running) await reaches(key, id, "running")
  expect(await statusOf(key, queued)).toBe("queued")
  return { account, key, running, queued }
}

const cancel = (token: string | undefined, id: string, headers: Record<string, string> = {}) =>
  h.call("POST", `/api/v1/proofs/${id}/cancel`, { token, headers })
const cancelBatch = (token: string | undefined, id: string, headers: Record<string, string> = {}) =>
  h.call("POST", `/api/v1/proofs/batch/${id}/cancel`, { token, headers })

const proofEvents = (account: string, type: string) =>
  h.run(Effect.map(Effect.flatMap(EventsRepo, (repo) => repo.list(account as never, { limit: 100 })), (page) =>
    oldestFirst(page.items).filter((e) => e.type === type).map((e) => e.data)))

/** The proofs this process's worker is proving, and the proofs storage says are running: equal once the worker has caught up. */
const workerAgrees = () =>
  eventually(async () => {
    const [inFlight, depth] = await runtime.runPromise(Effect.all([Effect.flatMap(ProofWorker, (w) => w.inFlight), Effect.flatMap(ProofsRepo, (r) => r.queueDepth)]))
    return inFlight === depth.running ? inFlight : undefined
  }, 10_000)

describe("POST /api/v1/proofs/:id/cancel", () => {
  it("a queued proof: 200 with the canceled record; its private inputs are gone, its daily unit is back; proof.canceled fires", async () => {
    const { account, key, queued } = await busyAccount("Queued")
    const before = Date.now()
    const reply = await cancel(key, queued)
    expect(reply.status).toBe(200)
    expectRequestId(reply)
    expect(Object.keys(reply.json).sort()).toEqual(PROOF_FIELDS)
    expect(reply.json).toMatchObject({ proof_id: queued, status: "canceled", started_at: null, completed_at: null, proof_blob: null, error: null })
    expect(reply.json.canceled_at).toMatch(ISO)
    expect(Date.parse(reply.json.canceled_at)).toBeGreaterThanOrEqual(before - 1_000)
    expect(Date.parse(reply.json.expires_at) - Date.parse(reply.json.canceled_at)).toBe(30 * 86_400_000)
    expect((await h.call("GET", `/api/v1/proofs/${queued}`, { token: key })).json).toEqual(reply.json)
    expect((await h.call("GET", "/api/v1/proofs?status=canceled", { token: key })).json.proofs.map((p: { proof_id: string }) => p.proof_id))
      .toEqual([queued])
    const stored = await h.run(Effect.flatMap(ProofsRepo, (r) => r.get(account, queued as never)))
    expect(stored._tag === "Some" && stored.value.inputs).toBeNull()
    expect(await proofEvents(account, "proof.canceled")).toEqual([
      { proof_id: queued, circuit: "multiplier", circuit_version: 1, status: "canceled", canceled_at: reply.json.canceled_at, created_at: reply.json.created_at, metadata: {} }
    ])
    // 3 of the 6 a day were charged and one given back: 4 more fit, the fifth is refused.
    for (let i = 0; i < 4; i++) expect((await h.call("POST", "/api/v1/proofs", { token: key, body: MULTIPLIER })).status).toBe(202)
    expectEnvelope(await h.call("POST", "/api/v1/proofs", { token: key, body: MULTIPLIER }), 429, "rate_limit_exceeded")
  })

  it("a running proof: 200 canceled, its worker stops proving it, and the queued one takes its place", async () => {
    const { account, key, queued, running } = await busyAccount("Running")
    const reply = await cancel(key, running[0]!)
    expect(reply.status).toBe(200)
    expect(reply.json).toMatchObject({ proof_id: running[0], status: "canceled", completed_at: null, proof_blob: null })
    expect(reply.json.started_at).toMatch(ISO)
    expect(reply.json.canceled_at >= reply.json.started_at).toBe(true)
    await reaches(key, queued, "running")
    // The worker holds exactly the proofs storage has running: the canceled one's proving ended.
    await workerAgrees()
    expect(await statusOf(key, running[0]!)).toBe("canceled")
    expect(await proofEvents(account, "proof.completed")).toEqual([])
    for (const id of [running[1]!, queued]) expect((await cancel(key, id)).status).toBe(200)
  })

  it("409 proof_not_cancelable, naming the status, for completed, failed, canceled and expired proofs", async () => {
    const { key } = await h.newAccount("Settled")
    const completed = (await createProof(h, key, MULTIPLIER)).proof_id
    const failed = (await createProof(h, key, FAILING)).proof_id
    await reaches(key, completed, "completed")
    await reaches(key, failed, "failed")
    const canceled = (await createProof(h, key, LONG)).proof_id
    expect((await cancel(key, canceled)).status).toBe(200)
    for (const [id, status] of [[completed, "completed"], [failed, "failed"], [canceled, "canceled"]] as const) {
      const reply = await cancel(key, id)
      expectEnvelope(reply, 409, "proof_not_cancelable")
      expect(reply.json.error.message).toBe(`Proof ${id} is ${status}; only queued or running proofs can be canceled`)
      expect(await statusOf(key, id)).toBe(status)
    }
    // Retention's sweep, as it runs once the 30 days are over.
    await h.run(Effect.flatMap(ProofsRepo, (r) => r.expireDue(timestampFromMillis(Date.now() + 31 * 86_400_000), 1000)))
    expect(await statusOf(key, completed)).toBe("expired")
    const expired = await cancel(key, completed)
    expectEnvelope(expired, 409, "proof_not_cancelable")
    expect(expired.json.error.message).toBe(`Proof ${completed} is expired; only queued or running proofs can be canceled`)
  })

  it("404 proof_not_found for another account's, unknown and malformed ids; 403 without proofs:write; 401 without a key", async () => {
    const mine = await busyAccount("Owner")
    const { key: theirs } = await h.newAccount("Stranger")
    for (const [token, id] of [[theirs, mine.queued], [mine.key, "proof_01jd0000000000000000000000"], [mine.key, "nope"]] as const) {
      expectEnvelope(await cancel(token, id), 404, "proof_not_found")
    }
    const readOnly = await keyWithScopes(h, mine.key, allBut("proofs:write"))
    const denied = await cancel(readOnly, mine.queued)
    expectEnvelope(denied, 403, "insufficient_scope")
    expect(denied.json.error.message).toContain("proofs:write")
    expectEnvelope(await cancel(undefined, mine.queued), 401, "invalid_api_key")
    // None of them touched it.
    expect(await statusOf(mine.key, mine.queued)).toBe("queued")
    for (const id of [...mine.running, mine.queued]) await cancel(mine.key, id)
  })

  it("is idempotent: a retry with the same Idempotency-Key replays the 200; without one, a second cancel is 409", async () => {
    const { account, key, queued, running } = await busyAccount("Retry")
    const first = await cancel(key, queued, { "idempotency-key": "cancel-once" })
    expect(first.status).toBe(200)
    const replay = await cancel(key, queued, { "idempotency-key": "cancel-once" })
    expect([replay.status, replay.headers.get("idempotent-replayed"), replay.headers.get("original-request")])
      .toEqual([200, "true", first.headers.get("request-id")])
    expect(replay.json).toEqual(first.json)
    expectEnvelope(await cancel(key, queued), 409, "proof_not_cancelable")
    // The key is bound to the path: another proof's cancel with it is refused.
    expectEnvelope(await cancel(key, running[0]!, { "idempotency-key": "cancel-once" }), 422, "idempotency_key_reused")
    expect((await proofEvents(account, "proof.canceled")).length).toBe(1)
    for (const id of running) await cancel(key, id)
  })

  it("a webhook may subscribe to proof.canceled", async () => {
    const { key } = await h.newAccount("Hooked")
    const webhook = await createWebhook(h, key, { events: ["proof.canceled"] })
    expect(webhook.events).toEqual(["proof.canceled"])
  })
})

describe("POST /api/v1/proofs/batch/:batch_id/cancel", () => {
  const batchOf = async (key: string, items: ReadonlyArray<unknown>) => {
    const reply = await h.call("POST", "/api/v1/proofs/batch", { token: key, body: { proofs: items } })
    expect(reply.status).toBe(202)
    return reply.json as { batch_id: string; proofs: Array<{ proof_id: string }> }
  }

  it("cancels the batch's queued and running proofs at once: 200 with its proofs and canceled_count; then canceled_count 0", async () => {
    const { account, key } = await h.newAccount("Batch")
    const batch = await batchOf(key, [MULTIPLIER, LONG, LONG, LONG])
    const ids = batch.proofs.map((p) => p.proof_id)
    await reaches(key, ids[0]!, "completed")
    for (const id of ids.slice(1, 3)) await reaches(key, id, "running")
    const reply = await cancelBatch(key, batch.batch_id)
    expect(reply.status).toBe(200)
    expectRequestId(reply)
    expect(Object.keys(reply.json).sort()).toEqual(["batch_id", "canceled_count", "proofs"])
    expect(reply.json.batch_id).toBe(batch.batch_id)
    expect(reply.json.canceled_count).toBe(3)
    expect(reply.json.proofs.map((p: { proof_id: string; status: string }) => [p.proof_id, p.status])).toEqual([
      [ids[0], "completed"],
      [ids[1], "canceled"],
      [ids[2], "canceled"],
      [ids[3], "canceled"]
    ])
    expect(Object.keys(reply.json.proofs[1]).sort()).toEqual(PROOF_FIELDS)
    expect((await proofEvents(account, "proof.canceled")).map((d) => d.proof_id)).toEqual(ids.slice(1))
    await workerAgrees()

    const again = await cancelBatch(key, batch.batch_id)
    expect(again.status).toBe(200)
    expect(again.json).toEqual({ ...reply.json, canceled_count: 0 })
    // 4 charged, 3 given back: 5 more of the 6 a day fit.
    for (let i = 0; i < 5; i++) expect((await h.call("POST", "/api/v1/proofs", { token: key, body: MULTIPLIER })).status).toBe(202)
    expectEnvelope(await h.call("POST", "/api/v1/proofs", { token: key, body: MULTIPLIER }), 429, "rate_limit_exceeded")
  })

  it("404 batch_not_found for another account's, unknown and malformed batch ids; 403 without proofs:write; replayed with its Idempotency-Key", async () => {
    const { key } = await h.newAccount("Batcher")
    const { key: theirs } = await h.newAccount("Other batcher")
    const batch = await batchOf(key, [LONG])
    for (const [token, id] of [[theirs, batch.batch_id], [key, "batch_01jd0000000000000000000000"], [key, batch.proofs[0]!.proof_id], [key, "nope"]] as const) {
      const reply = await cancelBatch(token, id)
      expectEnvelope(reply, 404, "batch_not_found")
    }
    expectEnvelope(await cancelBatch(await keyWithScopes(h, key, allBut("proofs:write")), batch.batch_id), 403, "insufficient_scope")
    expectEnvelope(await cancelBatch(undefined, batch.batch_id), 401, "invalid_api_key")
    expect(await statusOf(key, batch.proofs[0]!.proof_id)).not.toBe("canceled")

    const first: Reply = await cancelBatch(key, batch.batch_id, { "idempotency-key": "batch-cancel" })
    const replay = await cancelBatch(key, batch.batch_id, { "idempotency-key": "batch-cancel" })
    expect([first.status, first.json.canceled_count]).toEqual([200, 1])
    expect([replay.status, replay.headers.get("idempotent-replayed"), replay.json]).toEqual([200, "true", first.json])
  })
})
