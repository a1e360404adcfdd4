import { makeHttpClient } from "@mzk/testkit"
import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe } from "vitest"
import { MUL_SOURCE } from "../../../proving/test/fixtures/mulSource.js"
import { tarGz, zip } from "../../../http/test/archives.js"
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

  it.scopedLive("refuses at upload, naming the entry, a path that is a file and a folder, a name that is not UTF-8 or holds a NUL", () =>
    Effect.gen(function*() {
      const { baseUrl, keyOf } = yield* serverWithAccount({ workers: false })
      const { token } = yield* keyOf("Refused archives")
      const upload = (name: string, archive: Uint8Array, filename: string) =>
        Effect.promise(() => uploadArchive(baseUrl, token, name, archive, filename, "main.circom"))
      const refused = (what: string, reply: { status: number; json: Record<string, any> }) => {
        expect([reply.status, reply.json.error?.code], what).toEqual([400, "invalid_request"])
        return (reply.json.error.details as Array<{ path: string; message: string }>).map((d) => `${d.path}: ${d.message}`)
      }
      const main = { path: "main.circom", content: MUL_SOURCE }

      // `lib.circom` and `lib.circom/x.circom`: no folder can hold both, and the build failed on it as an internal error.
      const both = [main, { path: "lib.circom", content: "// a file" }, { path: "lib.circom/x.circom", content: "// in a folder of that name" }]
      for (const [format, archive] of [["zip", zip(both)], ["tar.gz", tarGz(both)]] as const) {
        expect(refused(format, yield* upload("both", archive, `both.${format}`))).toEqual([
          'archive: entry "lib.circom/x.circom": the path "lib.circom/x.circom" is inside "lib.circom", which is a file, not a folder'
        ])
      }
      // The same files as parts: the rule of every upload's paths.
      const form = new FormData()
      form.append("name", "both")
      form.append("main", new Blob([MUL_SOURCE]), "main.circom")
      form.append("sources", new Blob(["// a file"]), "lib.circom")
      form.append("sources", new Blob(["// in a folder of that name"]), "lib.circom/x.circom")
      const parts = yield* Effect.promise(async () => {
        const response = await fetch(`${baseUrl}/api/v1/circuits`, { method: "POST", body: form, headers: { authorization: `Bearer ${token}` } })
        return { status: response.status, json: await response.json() as Record<string, any> }
      })
      expect(refused("parts", parts)).toEqual(['sources: the path "lib.circom/x.circom" is inside "lib.circom", which is a file, not a folder'])

      // A name whose bytes are not UTF-8 (a zip entry flagged UTF-8, a tar header) was kept with U+FFFD in their place.
      const notUtf8 = Buffer.concat([Buffer.from("lib/"), Buffer.from([0xc3, 0x28]), Buffer.from(".circom")])
      const badName = { path: "lib/xx.circom", content: "// x", rawName: notUtf8 }
      for (const [format, archive] of [["zip", zip([main, badName])], ["tar.gz", tarGz([main, badName])]] as const) {
        expect(refused(format, yield* upload("not_utf8", archive, `names.${format}`))).toEqual([
          'archive: entry "lib/\ufffd(.circom": its name is not valid UTF-8'
        ])
      }
      const paxNotUtf8 = tarGz([main, { path: "lib/x.circom", content: "// x", pax: { path: notUtf8 } }])
      expect(refused("pax", yield* upload("not_utf8", paxNotUtf8, "pax.tgz"))).toEqual(['archive: entry "lib/\ufffd(.circom": its name is not valid UTF-8'])
      // A pax name with a NUL in it was cut there, to `lib/a`.
      const cut = tarGz([main, { path: "lib/a", content: "// x", pax: { path: "lib/a\u0000b.circom" } }])
      expect(refused("pax NUL", yield* upload("cut", cut, "cut.tgz"))).toEqual([
        'archive: entry "lib/a\\u0000b.circom": the path "lib/a\\u0000b.circom" holds control characters'
      ])

      // Nothing refused was stored.
      const api = makeHttpClient(baseUrl, { token })
      for (const name of ["both", "not_utf8", "cut"]) expect((yield* Effect.promise(() => api.send("GET", `/api/v1/circuits/${name}`))).status).toBe(404)
    }), 60_000)
})
