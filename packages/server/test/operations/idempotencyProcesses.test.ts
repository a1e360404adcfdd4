import { describePostgres, freshDatabaseUrl } from "@mzk/adapters-postgres/testing"
import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { createAccount, serveProcess } from "../processes.js"

describePostgres("Idempotency-Key across processes", () => {
  it.scopedLive("50 concurrent POSTs with one key, split over two mzk serve processes on one Postgres database: one proof, one charge", () =>
    Effect.gen(function*() {
      const { url } = yield* freshDatabaseUrl
      // Only the API runs here: the proof stays queued, and nothing but the requests touches the quota.
      const [a, b] = yield* Effect.all([serveProcess(url, { args: ["--no-workers"] }), serveProcess(url, { args: ["--no-workers"] })], { concurrency: 2 })
      const { api_key: key } = createAccount(url, "Two processes")
      const clients = [a!.client(key), b!.client(key)]
      const body = { type: "multiplier", inputs: { a: 6, b: 7 } }
      const replies = yield* Effect.promise(() =>
        Promise.all(Array.from({ length: 50 }, (_, i) =>
          clients[i % 2]!.send("POST", "/api/v1/proofs", { body, headers: { "idempotency-key": "nightly-2026-11-23" } })))
      )
      const repliedAt = Date.now()
      const fresh = replies.filter((r) => r.status === 202 && r.headers.get("idempotent-replayed") === null)
      expect(fresh).toHaveLength(1)
      const proofId = fresh[0]!.json.proof_id as string
      for (const reply of replies) {
        if (reply.status === 409) expect(reply.json.error.code).toBe("idempotency_key_in_use")
        else expect([reply.status, reply.json.proof_id]).toEqual([202, proofId])
      }
      // Both processes replay it now, and both see one proof.
      for (const client of clients) {
        const again = yield* Effect.promise(() => client.send("POST", "/api/v1/proofs", { body, headers: { "idempotency-key": "nightly-2026-11-23" } }))
        expect([again.status, again.headers.get("idempotent-replayed"), again.json.proof_id]).toEqual([202, "true", proofId])
        expect((yield* Effect.promise(() => client.send("GET", "/api/v1/proofs"))).json.total).toBe(1)
      }
      // One request of the key's 60 a minute was charged by the 52 POSTs: this one is the second,
      // unless the minute's window ended in between (a loaded machine may take that long); then it
      // is the first of the next window. Windows are told apart by when they end, 60 s apart.
      expect(fresh[0]!.headers.get("ratelimit")).toMatch(/^"key";r=59;t=\d+$/)
      const next = yield* Effect.promise(() => clients[0]!.send("POST", "/api/v1/proofs", { body }))
      const windowEnd = (header: string | null, at: number) => at + 1000 * Number(/;t=(\d+)$/.exec(header ?? "")?.[1])
      const sameWindow = Math.abs(windowEnd(next.headers.get("ratelimit"), Date.now()) - windowEnd(fresh[0]!.headers.get("ratelimit"), repliedAt)) < 30_000
      expect(next.headers.get("ratelimit")).toMatch(sameWindow ? /^"key";r=58;t=\d+$/ : /^"key";r=59;t=\d+$/)
    }), 120_000)
})
