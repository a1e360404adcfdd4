import { Accounts, ApiKeys } from "@mzk/core"
import { makeHttpClient } from "@mzk/testkit"
import { expect, it } from "@effect/vitest"
import { Effect, Exit, Redacted, Scope } from "effect"
import { join } from "node:path"
import { describe } from "vitest"
import { DEV_PTAU_POWER, settle, tempDir, uploadCircuit } from "./circuits.js"
import { startServer } from "../realServer.js"

const INPUTS = { xs: [1, 2, 3], bound: 10 }
const done = (p: { status: string }) => p.status !== "queued" && p.status !== "running"

describe("circuit versions over a real port", () => {
  it.scopedLive("upload twice → versions 1, 2; `name` proves with the newest ready one, `name@N` with N; list, page, remove one; events carry the version", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("versions")
      const ptauDir = yield* tempDir("ptau")
      const cacheDir = yield* tempDir("cache")
      // One database file, served in turn by servers that build and one that does not: while the
      // latter serves, version 2 stays `compiling` for as long as the test needs.
      const serve = (workers: boolean) =>
        Effect.gen(function*() {
          const scope = yield* Scope.make()
          // Closed by the test where it says so, else with the test (before its folders go).
          yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
          const server = yield* startServer({
            workers,
            database: { kind: "sqlite", filename: join(dir, "mzk.db") },
            circuits: { developmentPtau: { power: DEV_PTAU_POWER, dir: ptauDir }, cacheDir }
          }).pipe(Scope.extend(scope))
          return { ...server, close: Scope.close(scope, Exit.void) }
        })

      const first = yield* serve(true)
      const token = yield* Effect.gen(function*() {
        const account = yield* Effect.flatMap(Accounts, (a) => a.create({ name: "Versions" }))
        return Redacted.value((yield* Effect.flatMap(ApiKeys, (k) => k.create(account.id, { name: "tests" }))).secret)
      }).pipe(Effect.provide(first.context))
      const call = (baseUrl: string) => {
        const api = makeHttpClient(baseUrl, { token })
        return (method: string, path: string, body?: unknown) =>
          Effect.promise(() => api.send(method as never, path, body === undefined ? {} : { body }))
      }

      // 1. Version 1, built.
      let api = call(first.baseUrl)
      const v1 = yield* Effect.promise(() => uploadCircuit(first.baseUrl, token, "squares"))
      expect([v1.status, v1.json.version, v1.json.status]).toEqual([202, 1, "compiling"])
      const built = yield* Effect.promise(() => settle(makeHttpClient(first.baseUrl, { token }), "/api/v1/circuits/squares", (c) => c.status !== "compiling", 90_000))
      expect([built.version, built.status]).toEqual([1, "ready"])
      yield* first.close

      // 2. Version 2 uploaded to a server that builds nothing: it stays compiling.
      const idle = yield* serve(false)
      api = call(idle.baseUrl)
      const v2 = yield* Effect.promise(() => uploadCircuit(idle.baseUrl, token, "squares"))
      expect([v2.status, v2.json.version, v2.json.status]).toEqual([202, 2, "compiling"])
      expect((yield* api("GET", "/api/v1/circuits/squares")).json).toMatchObject({ version: 2, status: "compiling" })
      const pinned = yield* api("GET", "/api/v1/circuits/squares@1")
      expect(pinned.json).toMatchObject({ version: 1, status: "ready", id: v1.json.id })
      // `@` percent-encoded, as clients encode a path segment, names the same version.
      expect((yield* api("GET", "/api/v1/circuits/squares%401")).json.id).toBe(v1.json.id)
      expect((yield* api("GET", "/api/v1/circuits/squares@1/verifier.sol")).status).toBe(200)
      const notBuilt = yield* api("GET", "/api/v1/circuits/squares@2/verifier.sol")
      expect([notBuilt.status, notBuilt.json.error.code]).toEqual([409, "circuit_not_ready"])
      const listed = (yield* api("GET", "/api/v1/circuits")).json.circuits.filter((c: { owner: string }) => c.owner !== "builtin")
      expect(listed.map((c: { name: string; version: number }) => [c.name, c.version])).toEqual([["squares", 2]])

      const newestReady = yield* api("POST", "/api/v1/proofs", { type: "squares", inputs: INPUTS })
      expect([newestReady.status, newestReady.json.type, newestReady.json.circuit, newestReady.json.circuit_version]).toEqual([202, "squares", "squares", 1])
      const byNumber = yield* api("POST", "/api/v1/proofs", { type: "squares@1", inputs: INPUTS })
      expect([byNumber.status, byNumber.json.type, byNumber.json.circuit_version]).toEqual([202, "squares@1", 1])
      const compiling = yield* api("POST", "/api/v1/proofs", { type: "squares@2", inputs: INPUTS })
      expect([compiling.status, compiling.json.error.code]).toEqual([409, "circuit_not_ready"])
      expect(compiling.json.error.message).toContain("squares@2")
      const noSuch = yield* api("POST", "/api/v1/proofs", { type: "squares@9", inputs: INPUTS })
      expect([noSuch.status, noSuch.json.error.code, noSuch.json.error.details]).toEqual([
        400, "invalid_request", [{ path: "type", message: 'unknown proof type "squares@9": squares has no version 9 (its versions: 2, 1)' }]
      ])
      const batch = yield* api("POST", "/api/v1/proofs/batch", { proofs: [{ type: "squares@1", inputs: INPUTS }, { type: "squares@9", inputs: INPUTS }] })
      expect([batch.status, batch.json.error.details]).toEqual([400, [{ path: "proofs.1.type", message: 'unknown proof type "squares@9": squares has no version 9 (its versions: 2, 1)' }]])
      const unknown = yield* api("GET", "/api/v1/circuits/squares@9")
      expect([unknown.status, unknown.json.error.code]).toEqual([404, "circuit_not_found"])
      expect(unknown.json.error.message).toContain("squares@9")

      // The versions, newest first, paged both ways by id; a bad query or a versioned name is 400.
      const page1 = (yield* api("GET", "/api/v1/circuits/squares/versions?limit=1")).json
      expect([page1.versions.map((c: { version: number }) => c.version), page1.total, page1.has_more]).toEqual([[2], 2, true])
      const page2 = (yield* api("GET", `/api/v1/circuits/squares/versions?limit=1&starting_after=${page1.versions[0].id}`)).json
      expect([page2.versions.map((c: { version: number }) => c.version), page2.has_more]).toEqual([[1], false])
      const back = (yield* api("GET", `/api/v1/circuits/squares/versions?limit=1&ending_before=${page2.versions[0].id}`)).json
      expect([back.versions.map((c: { version: number }) => c.version), back.has_more]).toEqual([[2], false])
      for (const [path, field] of [
        ["/api/v1/circuits/squares/versions?bogus=1", "bogus"],
        ["/api/v1/circuits/squares/versions?limit=0", "limit"],
        ["/api/v1/circuits/squares/versions?starting_after=proof_1", "starting_after"],
        ["/api/v1/circuits/squares@1/versions", "name"]
      ] as const) {
        const refused = yield* api("GET", path)
        expect([refused.status, refused.json.error.code, refused.json.error.details?.[0]?.path], path).toEqual([400, "invalid_request", field])
      }
      const none = yield* api("GET", "/api/v1/circuits/nothing/versions")
      expect([none.status, none.json.error.code]).toEqual([404, "circuit_not_found"])
      expect((yield* api("GET", "/api/v1/circuits/multiplier/versions")).json.versions.map((c: { version: number }) => c.version)).toEqual([1])

      // Version 1 has queued proofs: neither it nor the whole name can be removed, and nothing is.
      const inUse = yield* api("DELETE", "/api/v1/circuits/squares@1")
      expect([inUse.status, inUse.json.error.code]).toEqual([409, "circuit_in_use"])
      const allInUse = yield* api("DELETE", "/api/v1/circuits/squares")
      expect([allInUse.status, allInUse.json.error.code]).toEqual([409, "circuit_in_use"])
      expect((yield* api("GET", "/api/v1/circuits/squares/versions")).json.total).toBe(2)
      yield* idle.close

      // 3. A server that builds again: version 2 is built, the queued proofs of version 1 proven.
      const worker = yield* serve(true)
      api = call(worker.baseUrl)
      const client = makeHttpClient(worker.baseUrl, { token })
      for (const proof of [newestReady, byNumber]) {
        const settled = yield* Effect.promise(() => settle(client, `/api/v1/proofs/${proof.json.proof_id}`, done, 90_000))
        expect([settled.status, settled.circuit_version]).toEqual(["completed", 1])
      }
      yield* Effect.promise(() => settle(client, "/api/v1/circuits/squares", (c) => c.status !== "compiling", 90_000))
      const newest = yield* api("POST", "/api/v1/proofs", { type: "squares", inputs: INPUTS })
      expect(newest.json.circuit_version).toBe(2)
      expect((yield* Effect.promise(() => settle(client, `/api/v1/proofs/${newest.json.proof_id}`, done, 90_000))).status).toBe("completed")
      const verified = yield* api("GET", `/api/v1/proofs/${newest.json.proof_id}/verify`)
      expect(verified.json).toMatchObject({ valid: true, circuit: "squares", circuit_version: 2 })

      // The events name the version built and the version proven.
      const ready = (yield* api("GET", "/api/v1/events?type=circuit.ready")).json.events
      expect(ready.map((e: { data: { name: string; version: number } }) => [e.data.name, e.data.version])).toEqual([["squares", 2], ["squares", 1]])
      const completed = (yield* api("GET", "/api/v1/events?type=proof.completed")).json.events
      expect(completed.map((e: { data: { proof_id: string; circuit_version: number } }) => [e.data.proof_id, e.data.circuit_version]).sort()).toEqual(
        [[newest.json.proof_id, 2], [newestReady.json.proof_id, 1], [byNumber.json.proof_id, 1]].sort()
      )

      // Version 1 removed alone: gone by number, its proofs still verify with its own key.
      expect((yield* api("DELETE", "/api/v1/circuits/squares@1")).status).toBe(204)
      expect((yield* api("GET", "/api/v1/circuits/squares@1")).status).toBe(404)
      expect((yield* api("GET", "/api/v1/circuits/squares/versions")).json.versions.map((c: { version: number }) => c.version)).toEqual([2])
      expect((yield* api("GET", `/api/v1/proofs/${byNumber.json.proof_id}/verify`)).json).toMatchObject({ valid: true, circuit_version: 1 })
      const gone = yield* api("POST", "/api/v1/proofs", { type: "squares@1", inputs: INPUTS })
      expect([gone.status, gone.json.error.code]).toEqual([400, "invalid_request"])
      // Removing the name removes what is left; its number is not given again.
      expect((yield* api("DELETE", "/api/v1/circuits/squares")).status).toBe(204)
      expect((yield* api("GET", "/api/v1/circuits/squares")).status).toBe(404)
      const v3 = yield* Effect.promise(() => uploadCircuit(worker.baseUrl, token, "squares"))
      expect([v3.status, v3.json.version]).toEqual([202, 3])
    }), 300_000)
})
