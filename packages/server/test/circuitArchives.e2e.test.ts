import { makeHttpClient } from "@mzk/testkit"
import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe } from "vitest"
import { MUL_SOURCE } from "../../../circuits/test/fixtures/mulSource.js"
import { zip } from "../../http/test/archives.js"
import { BOUNDED_SQUARES, serverWithAccount, settle, tempDir } from "./circuits.js"

/** `curl -F name=… -F archive=@file -F main=…`: the archive as a file part, main as a text field. */
const uploadArchive = async (baseUrl: string, token: string, name: string, archive: Uint8Array, filename: string, main: string) => {
  const form = new FormData()
  form.append("name", name)
  form.append("archive", new Blob([archive]), filename)
  form.append("main", main)
  const response = await fetch(`${baseUrl}/api/v1/circuits`, { method: "POST", body: form, headers: { authorization: `Bearer ${token}` } })
  return { status: response.status, json: await response.json() as Record<string, any> }
}

describe("circuit sources uploaded as one archive, over a real port", () => {
  it.scopedLive("a zip and a tar.gz made by `tar czf` are built to ready circuits that prove and verify", () =>
    Effect.gen(function*() {
      const { baseUrl, keyOf } = yield* serverWithAccount({ workers: true })
      const { token } = yield* keyOf("Archives")
      const api = makeHttpClient(baseUrl, { token })

      // The multiplier as a zip, in a folder of its own.
      const zipped = zip([{ path: "circuits/", mode: 0o040755 }, { path: "circuits/mul.circom", content: MUL_SOURCE }])
      const mul = yield* Effect.promise(() => uploadArchive(baseUrl, token, "mul_zip", zipped, "mul.zip", "circuits/mul.circom"))
      expect([mul.status, mul.json.status]).toEqual([202, "compiling"])

      // Two files with an include, as `tar czf squares.tgz squares/` packs a project folder; main named inside it.
      const dir = yield* tempDir("archive")
      mkdirSync(join(dir, "squares", "lib"), { recursive: true })
      writeFileSync(join(dir, "squares", "main.circom"), BOUNDED_SQUARES.main)
      writeFileSync(join(dir, "squares", "lib", "square.circom"), BOUNDED_SQUARES.sources["lib/square.circom"])
      execFileSync("tar", ["czf", "squares.tgz", "squares"], { cwd: dir })
      const squares = yield* Effect.promise(() =>
        uploadArchive(baseUrl, token, "squares_tgz", readFileSync(join(dir, "squares.tgz")), "squares.tgz", "main.circom"))
      expect([squares.status, squares.json.status]).toEqual([202, "compiling"])

      const mulReady = yield* Effect.promise(() => settle(api, "/api/v1/circuits/mul_zip", (c) => c.status !== "compiling", 90_000))
      expect(mulReady).toMatchObject({ status: "ready", public_signals: ["c"], development_only: true })
      const squaresReady = yield* Effect.promise(() => settle(api, "/api/v1/circuits/squares_tgz", (c) => c.status !== "compiling", 90_000))
      expect(squaresReady).toMatchObject({ status: "ready", constraints: 51, public_signals: ["total", "bound"] })

      for (const [type, inputs, expected] of [
        ["mul_zip", { a: 3, b: 11 }, { c: "33" }],
        ["squares_tgz", { xs: [1, 2, 3], bound: 10 }, { total: "14", bound: "10" }]
      ] as const) {
        const created = yield* Effect.promise(() => api.send("POST", "/api/v1/proofs", { body: { type, inputs } }))
        expect(created.status).toBe(202)
        const proof = yield* Effect.promise(() => settle(api, `/api/v1/proofs/${created.json.proof_id}`, (p) => p.status === "completed" || p.status === "failed"))
        expect(proof).toMatchObject({ status: "completed", public_inputs: expected })
        expect((yield* Effect.promise(() => api.send("GET", `/api/v1/proofs/${proof.proof_id}/verify`))).json.valid).toBe(true)
      }
    }), 240_000)
})
