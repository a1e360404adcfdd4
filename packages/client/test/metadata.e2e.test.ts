import { expect, it } from "@effect/vitest"
import { createClient, MzkApiError } from "@mzk/client"
import { Accounts, ApiKeys } from "@mzk/core"
import { Effect, Redacted } from "effect"
import { describe } from "vitest"
import { startServer } from "../../server/test/realServer.js"

describe("@mzk/client and metadata, against a real server", () => {
  it.scopedLive("sends metadata on creates and updates, and filters the proofs list by it", () =>
    Effect.gen(function*() {
      const { baseUrl, context } = yield* startServer({ allowInsecureWebhooks: true })
      const apiKey = yield* Effect.gen(function*() {
        const account = yield* (yield* Accounts).create({ name: "Client metadata" })
        return Redacted.value((yield* (yield* ApiKeys).create(account.id, { name: "bootstrap" })).secret)
      }).pipe(Effect.provide(context))
      const client = createClient({ baseUrl, apiKey })

      yield* Effect.promise(async () => {
        const a = await client.proofs.create({ type: "multiplier", inputs: { a: 2, b: 3 }, metadata: { order: "42", tier: "gold" } })
        expect(a.metadata).toEqual({ order: "42", tier: "gold" })
        const b = await client.proofs.create({ type: "multiplier", inputs: { a: 2, b: 5 }, metadata: { order: "42", tier: "silver" } })
        await client.proofs.create({ type: "multiplier", inputs: { a: 2, b: 7 } })
        const batch = await client.proofs.createBatch({ metadata: { order: "43" }, proofs: [{ type: "multiplier", inputs: { a: 1, b: 1 } }] })
        expect(batch.proofs[0]!.metadata).toEqual({ order: "43" })

        // The filter is an object; the client writes it as `metadata[order]=42`.
        const byOrder = await client.proofs.list({ metadata: { order: "42" } })
        expect(byOrder.proofs.map((p) => p.proof_id)).toEqual([b.proof_id, a.proof_id])
        expect(byOrder.total).toBe(2)
        const both = await client.proofs.list({ metadata: { order: "42", tier: "silver" }, status: "queued", limit: 10 })
        expect(both.proofs.map((p) => p.proof_id)).toEqual([b.proof_id])
        expect((await client.proofs.list({ metadata: { order: "nope" } })).proofs).toEqual([])
        const paged = await client.proofs.list({ metadata: { order: "42" }, limit: 1 })
        expect(paged).toMatchObject({ total: 2, has_more: true })
        expect((await client.proofs.list({ metadata: { order: "42" }, starting_after: paged.proofs[0]!.proof_id })).proofs.map((p) => p.proof_id))
          .toEqual([a.proof_id])

        const key = await client.keys.create({ name: "ci", metadata: { team: "payments" } })
        expect(key.metadata).toEqual({ team: "payments" })
        const hook = await client.webhooks.create({ url: "http://127.0.0.1:9/hook", events: ["proof.completed"], metadata: { env: "prod" } })
        expect(hook.metadata).toEqual({ env: "prod" })
        expect((await client.webhooks.update(hook.id, { metadata: { env: "", region: "eu" } })).metadata).toEqual({ region: "eu" })

        // A refused value: the server's 400, its details naming the field.
        const refused = await client.keys.create({ name: "bad", metadata: { ["k".repeat(41)]: "v" } }).then(() => undefined, (e: unknown) => e)
        expect(refused).toBeInstanceOf(MzkApiError)
        expect((refused as MzkApiError).status).toBe(400)
        expect((refused as MzkApiError).details?.map((d) => d.path)).toContain(`metadata.${"k".repeat(41)}`)
        const badFilter = await client.proofs.list({ metadata: { "a b": "1" } }).then(() => undefined, (e: unknown) => e)
        expect((badFilter as MzkApiError).details?.map((d) => d.path)).toContain("metadata[a b]")
      })
    }), 60_000)
})
