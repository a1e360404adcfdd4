import { expect, it } from "@effect/vitest"
import { createClient, MzkApiError } from "@mzk/client"
import { Accounts, ApiKeys } from "@mzk/core"
import { Effect, Redacted } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe } from "vitest"
import { startServer } from "../../server/test/realServer.js"

/** Every item of an async iterable, in order. */
const collect = async <T>(items: AsyncIterable<T>): Promise<Array<T>> => {
  const out: Array<T> = []
  for await (const item of items) out.push(item)
  return out
}

describe("@mzk/client pages automatically against a real server", () => {
  it.scopedLive("for await walks every page of a list; awaiting it is still one page", () =>
    Effect.gen(function*() {
      // No workers: the proofs stay queued, so no proof is made here.
      const { baseUrl, context } = yield* startServer({ allowInsecureWebhooks: true })
      const account = yield* Effect.flatMap(Accounts, (a) => a.create({ name: "Paging" })).pipe(Effect.provide(context))
      const first = yield* Effect.flatMap(ApiKeys, (k) => k.create(account.id, { name: "bootstrap" })).pipe(Effect.provide(context))
      const client = createClient({ baseUrl, apiKey: Redacted.value(first.secret) })
      const run = <A>(f: () => Promise<A>) => Effect.promise(f)
      // Counts the requests the client sends, to see that pages are fetched as needed and once.
      let requests = 0
      const counting = createClient({
        baseUrl,
        apiKey: Redacted.value(first.secret),
        fetch: (url, init) => {
          requests++
          return globalThis.fetch(url, init)
        }
      })

      const proofs: Array<string> = []
      for (let i = 0; i < 5; i++) proofs.unshift((yield* run(() => client.proofs.create({ type: "multiplier", inputs: { a: 3, b: i + 1 } }))).proof_id)
      const webhooks: Array<string> = []
      for (let i = 0; i < 3; i++) webhooks.unshift((yield* run(() => client.webhooks.create({ url: "http://127.0.0.1:9/hook", events: ["key.created"] }))).id)
      for (let i = 0; i < 3; i++) yield* run(() => client.keys.create({ name: `k${i}` }))

      // The single-page call is unchanged.
      const page = yield* run(() => client.proofs.list({ limit: 2 }))
      expect(page.proofs.map((p) => p.proof_id)).toEqual(proofs.slice(0, 2))
      expect([page.total, page.has_more]).toEqual([5, true])

      // for await: every proof, newest first, over three pages of two.
      const all = yield* run(() => collect(counting.proofs.list({ limit: 2 })))
      expect(all.map((p) => p.proof_id)).toEqual(proofs)
      expect(requests).toBe(3)
      // From a cursor on, and with a filter kept on every page.
      expect((yield* run(() => collect(client.proofs.list({ limit: 2, starting_after: proofs[1]! })))).map((p) => p.proof_id)).toEqual(proofs.slice(2))
      expect((yield* run(() => collect(client.proofs.list({ limit: 1, status: "queued" }))))).toHaveLength(5)
      expect(yield* run(() => collect(client.proofs.list({ limit: 1, status: "completed" })))).toEqual([])
      // Back toward newer items with ending_before: yielded oldest first, from just before the cursor.
      const back = yield* run(() => collect(client.proofs.list({ limit: 2, ending_before: proofs[4]! })))
      expect(back.map((p) => p.proof_id)).toEqual(proofs.slice(0, 4).reverse())

      // Every paged list of the client iterates.
      expect((yield* run(() => collect(client.webhooks.list({ limit: 2 })))).map((w) => w.id)).toEqual(webhooks)
      const events = yield* run(() => collect(client.events.list({ limit: 2, type: "key.created" })))
      // The bootstrap key's and the three made here.
      expect(events.map((e) => e.type)).toEqual(["key.created", "key.created", "key.created", "key.created"])
      expect(events.map((e) => e.id)).toEqual(events.map((e) => e.id).sort().reverse())
      const audit = yield* run(() => collect(client.audit.list({ limit: 4 })))
      expect(audit.length).toBeGreaterThanOrEqual(6)
      expect(audit.map((e) => e.id)).toEqual(audit.map((e) => e.id).sort().reverse())
      expect(yield* run(() => collect(client.webhooks.deliveries(webhooks[0]!, { limit: 2 })))).toEqual([])
      const recovery = yield* run(() => client.webhooks.recover(webhooks[0]!, { since: new Date(Date.now() - 3_600_000).toISOString() }))
      expect((yield* run(() => collect(client.webhooks.recoveries(webhooks[0]!, { limit: 1 })))).map((r) => r.id)).toEqual([recovery.id])

      // A failing page rejects the iteration with the API's error.
      const failed = yield* run(() => collect(client.proofs.list({ limit: 2, starting_after: proofs[0]!, ending_before: proofs[1]! })).then(() => undefined, (e: unknown) => e))
      expect(failed).toBeInstanceOf(MzkApiError)
      expect((failed as MzkApiError).code).toBe("invalid_request")
    }), 60_000)
  it.scopedLive("circuits.versions walks every version of a name, newest first; get and remove take name@N", () =>
    Effect.gen(function*() {
      const ptau = yield* Effect.acquireRelease(
        Effect.sync(() => mkdtempSync(join(tmpdir(), "mzk-client-versions-"))),
        (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
      )
      // No build loop: uploads stay compiling, which versions need not wait for.
      const { baseUrl, context } = yield* startServer({
        circuits: { developmentPtau: { power: 8, dir: ptau }, cacheDir: join(ptau, "cache"), maxCompilingPerAccount: 10 }
      })
      const account = yield* Effect.flatMap(Accounts, (a) => a.create({ name: "Versions" })).pipe(Effect.provide(context))
      const key = yield* Effect.flatMap(ApiKeys, (k) => k.create(account.id, { name: "bootstrap" })).pipe(Effect.provide(context))
      let requests = 0
      const client = createClient({
        baseUrl,
        apiKey: Redacted.value(key.secret),
        fetch: (url, init) => {
          requests++
          return globalThis.fetch(url, init)
        }
      })
      const run = <A>(f: () => Promise<A>) => Effect.promise(f)
      const main = "pragma circom 2.1.6;\ntemplate T() { signal input a; }\ncomponent main = T();\n"
      const uploaded: Array<number> = []
      for (let i = 0; i < 5; i++) uploaded.push((yield* run(() => client.circuits.create({ name: "evolving", main }))).version)
      expect(uploaded).toEqual([1, 2, 3, 4, 5])

      requests = 0
      const all = yield* run(() => collect(client.circuits.versions("evolving", { limit: 2 })))
      expect(all.map((c) => c.version)).toEqual([5, 4, 3, 2, 1])
      expect(requests).toBe(3)
      const page = yield* run(() => client.circuits.versions("evolving", { limit: 2 }))
      expect([page.versions.map((c) => c.version), page.total, page.has_more]).toEqual([[5, 4], 5, true])
      const newer = yield* run(() => collect(client.circuits.versions("evolving", { limit: 1, ending_before: all[3]!.id! })))
      expect(newer.map((c) => c.version)).toEqual([3, 4, 5])

      expect((yield* run(() => client.circuits.get("evolving@2"))).id).toBe(all[3]!.id)
      expect((yield* run(() => client.circuits.get("evolving"))).version).toBe(5)
      yield* run(() => client.circuits.remove("evolving@2"))
      expect((yield* run(() => collect(client.circuits.versions("evolving")))).map((c) => c.version)).toEqual([5, 4, 3, 1])
      const gone = yield* run(() => client.circuits.get("evolving@2").then(() => undefined, (e: unknown) => e))
      expect(gone).toBeInstanceOf(MzkApiError)
      expect([(gone as MzkApiError).status, (gone as MzkApiError).code]).toEqual([404, "circuit_not_found"])
      const unknown = yield* run(() => collect(client.circuits.versions("nothing")).then(() => undefined, (e: unknown) => e))
      expect((unknown as MzkApiError).code).toBe("circuit_not_found")
    }), 60_000)
})
