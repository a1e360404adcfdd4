import { describePostgres, freshDatabaseUrl } from "@mzk/adapters-postgres/testing"
import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import pg from "pg"
import { DEV_PTAU_POWER, settle, SPIN, spinningProof, tempDir, uploadCircuit } from "../circuits/circuits.js"
import { createAccount, mzkProcess, serveProcess } from "../processes.js"

/** Polls (in real time) until `check` holds for what `probe` returns; dies with `what` after `withinMs`. */
const until = <A>(probe: () => A | Promise<A>, check: (a: A) => boolean, withinMs: number, what: string) =>
  Effect.promise(async () => {
    const deadline = Date.now() + withinMs
    for (;;) {
      const value = await probe()
      if (check(value)) return value
      if (Date.now() > deadline) throw new Error(`Not within ${withinMs} ms: ${what}`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  })

describePostgres("proof cancellation across processes", () => {
  it.scopedLive("mzk serve (API only) cancels a proof that a mzk worker on the same Postgres database is proving: the worker stops it", () =>
    Effect.gen(function*() {
      const { url } = yield* freshDatabaseUrl
      const ptau = ["--dev-ptau", "--dev-ptau-power", String(DEV_PTAU_POWER), "--dev-ptau-dir", yield* tempDir("ptau")]
      const api = yield* serveProcess(url, { args: ["--no-workers", ...ptau, "--cache-dir", yield* tempDir("api-cache")], upWithinMs: 60_000 })
      // One prover thread and a 10-minute proof timeout: only the cancel can free the thread in time.
      const worker = yield* mzkProcess([
        "worker", "--database", url, "--prover-threads", "1", "--proof-timeout", "10m", ...ptau, "--cache-dir", yield* tempDir("worker-cache")
      ])
      const { api_key: key } = createAccount(url, "Two processes")
      const client = api.client(key)
      const call = (method: string, path: string, body?: unknown) => Effect.promise(() => client.send(method, path, body === undefined ? {} : { body }))

      // The worker builds the upload and proves it; the API process only stores and answers.
      expect((yield* Effect.promise(() => uploadCircuit(api.baseUrl, key, "spin", SPIN))).status).toBe(202)
      yield* Effect.promise(() => settle(client, "/api/v1/circuits/spin", (c) => c.status !== "compiling", 120_000))
      const id = (yield* spinningProof(client)).proof_id

      const canceled = yield* call("POST", `/api/v1/proofs/${id}/cancel`)
      expect([canceled.status, canceled.json.status]).toEqual([200, "canceled"])
      const canceledAt = Date.now()
      // The worker, told by Postgres (NOTIFY), stops proving it and says so.
      yield* until(() => worker.output(), (output) => output.includes(`proof ${id} stopped`), 30_000, "the worker's line about the stopped proof")
      const stoppedAfter = Date.now() - canceledAt
      // Its hand-back on interruption is conditional on the claim too: it finds nothing, and is no failure.
      expect(worker.output()).not.toMatch(/could not be (settled|handed back)/)

      // Its only prover thread was released: the next proof is proven at once, not in 10 minutes.
      const next = yield* call("POST", "/api/v1/proofs", { type: "multiplier", inputs: { a: 3, b: 11 } })
      const done = yield* Effect.promise(() => settle(client, `/api/v1/proofs/${next.json.proof_id}`, (p) => p.status === "completed" || p.status === "failed", 60_000))
      expect(done).toMatchObject({ status: "completed", public_inputs: { c: "33" } })
      console.log(`the worker had logged the stop ${stoppedAfter} ms after the API's answer; the next proof completed ${Date.now() - canceledAt} ms after it`)

      const db = new pg.Client({ connectionString: url })
      yield* Effect.acquireRelease(Effect.promise(() => db.connect()), () => Effect.promise(() => db.end()))
      const rows = (yield* Effect.promise(() => db.query("select status, attempts, inputs, lease_expires_at from proofs where id = $1", [id]))).rows
      expect(rows).toEqual([{ status: "canceled", attempts: 1, inputs: null, lease_expires_at: null }])
      const events = (yield* Effect.promise(() => db.query("select type, data from events order by id"))).rows as Array<{ type: string; data: string }>
      expect(events.filter((e) => JSON.parse(e.data).proof_id === id).map((e) => e.type)).toEqual(["proof.canceled"])
    }), 240_000)
})
