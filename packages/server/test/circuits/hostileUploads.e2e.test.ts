// Nothing a tenant uploads can end the server: every kind of malformed Noir program, circom
// source, prebuilt artifact and archive, sent to one `./mzk serve` (the README's entry point, the
// CLI's bundle) in turn. After each, the process is the same one (its pid alive, never restarted)
// and /healthz answers; each upload is refused at once or fails its own build with the tenant's
// code, never `internal`, and no error shows a server path.
import { makeHttpClient } from "@mzk/testkit"
import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe } from "vitest"
import { MUL_SOURCE } from "../../../proving/test/fixtures/mulSource.js"
import { tarGz, zip } from "../../../http/test/archives.js"
import { settle, tempDir } from "./circuits.js"
import { createAccount, root, serveProcess } from "../processes.js"

const MANIFEST = `[package]\nname = "sum"\ntype = "bin"\nauthors = [""]\n`
const MAIN_NR = "fn main(x: Field, y: pub Field) -> pub Field {\n    assert(x != y);\n    x + y\n}\n"
const multiplier = (file: string) => new Uint8Array(readFileSync(join(root, "packages", "proving", "build", "multiplier", file)))
const utf8 = (text: string) => new TextEncoder().encode(text)

type Part = readonly [field: string, content: string | Uint8Array, filename?: string]
interface Case {
  readonly what: string
  readonly parts: ReadonlyArray<Part>
  /** Refused at upload with this status and error code, or accepted and failed by its build with this code. */
  readonly expected: { readonly status: number; readonly code: string } | { readonly build: string }
}

const noirProgram = (program: unknown): Part => ["noir_program", typeof program === "string" ? program : JSON.stringify(program), "program.json"]
const program = (abi: unknown, extra: Record<string, unknown> = {}) => ({ noir_version: "1.0.0-beta.3+0", abi, bytecode: "H4sIAAAAAAAA/wMAAAAAAAAAAAA=", ...extra })

const CASES: ReadonlyArray<Case> = [
  // Noir sources: what the Noir engine refuses itself once ended the process (its code was unknown to the server).
  {
    what: "Nargo.toml with [dependencies]",
    parts: [["noir_sources", `${MANIFEST}\n[dependencies]\nlib = { git = "https://example.com/lib", tag = "v1" }\n`, "Nargo.toml"], ["noir_sources", MAIN_NR, "src/main.nr"]],
    expected: { build: "compile_error" }
  },
  {
    what: "a library, not a program",
    parts: [["noir_sources", MANIFEST.replace('"bin"', '"lib"'), "Nargo.toml"], ["noir_sources", MAIN_NR, "src/main.nr"]],
    expected: { build: "compile_error" }
  },
  {
    what: "Noir without src/main.nr",
    parts: [["noir_sources", MANIFEST, "Nargo.toml"], ["noir_sources", MAIN_NR, "src/other.nr"]],
    expected: { status: 400, code: "invalid_request" }
  },
  {
    what: "Noir that does not compile",
    parts: [["noir_sources", MANIFEST, "Nargo.toml"], ["noir_sources", "fn main(x: Field) {\n    let y: bool = x;\n}\n", "src/main.nr"]],
    expected: { build: "compile_error" }
  },
  {
    what: "Noir source of invalid UTF-8",
    parts: [["noir_sources", MANIFEST, "Nargo.toml"], ["noir_sources", new Uint8Array([0x66, 0x6e, 0xff, 0xfe, 0x00, 0xc3]), "src/main.nr"]],
    expected: { build: "compile_error" }
  },
  // Prebuilt Noir programs: the uploader's JSON, read by this process.
  { what: "a program that is not JSON", parts: [noirProgram("{not json")], expected: { build: "invalid_artifacts" } },
  { what: "a program that is a JSON array", parts: [noirProgram([1, 2])], expected: { build: "invalid_artifacts" } },
  { what: "a program whose bytecode is not base64", parts: [noirProgram(program({ parameters: [], return_type: null }, { bytecode: "!!" }))], expected: { build: "invalid_artifacts" } },
  { what: "a program of another noirc", parts: [noirProgram(program({ parameters: [], return_type: null }, { noir_version: "0.30.0" }))], expected: { build: "invalid_artifacts" } },
  { what: "an ABI whose parameters are null", parts: [noirProgram(program({ parameters: [null], return_type: null }))], expected: { build: "invalid_artifacts" } },
  {
    what: "an ABI claiming an array of 2^31 public values",
    parts: [noirProgram(program({ parameters: [{ name: "x", type: { kind: "array", length: 2 ** 31, type: { kind: "field" } }, visibility: "public" }], return_type: null }))],
    expected: { build: "invalid_artifacts" }
  },
  {
    what: "an ABI nested ten thousand deep",
    parts: [noirProgram(JSON.stringify(program({ parameters: [{ name: "x", type: "TYPE", visibility: "private" }], return_type: null }))
      .replace('"TYPE"', `${'{"kind":"array","length":1,"type":'.repeat(10_000)}{"kind":"field"}${"}".repeat(10_000)}`))],
    expected: { build: "invalid_artifacts" }
  },
  // Circom sources.
  { what: "circom that does not parse", parts: [["main", "pragma circom 2.1.0;\ntemplate T( {\n", "main.circom"]], expected: { build: "compile_error" } },
  { what: "circom of binary garbage", parts: [["main", new Uint8Array([0, 1, 2, 0xff, 0xfe, 0x7f]), "main.circom"]], expected: { build: "compile_error" } },
  {
    what: "circom including a file outside the upload",
    parts: [["main", `pragma circom 2.1.0;\ninclude "../../etc/passwd";\n${MUL_SOURCE.replace(/^pragma.*$/m, "")}`, "main.circom"]],
    expected: { build: "include_outside_upload" }
  },
  // Prebuilt circom artifacts.
  { what: "prebuilt garbage", parts: [["wasm", utf8("nope"), "c.wasm"], ["zkey", utf8("nope"), "c.zkey"], ["sym", utf8("nope"), "c.sym"]], expected: { build: "invalid_artifacts" } },
  {
    what: "a zkey cut short",
    parts: [["wasm", multiplier("multiplier.wasm"), "c.wasm"], ["zkey", multiplier("multiplier.zkey").subarray(0, 900), "c.zkey"], ["sym", utf8("1,1,0,main.c\n"), "c.sym"]],
    expected: { build: "invalid_artifacts" }
  },
  {
    what: "sample inputs that are not JSON",
    parts: [
      ["wasm", multiplier("multiplier.wasm"), "c.wasm"],
      ["zkey", multiplier("multiplier.zkey"), "c.zkey"],
      ["sym", utf8("1,1,0,main.c\n2,2,0,main.a\n3,3,0,main.b\n"), "c.sym"],
      ["sample_inputs", "{", "input.json"]
    ],
    expected: { status: 400, code: "invalid_request" }
  },
  // Archives.
  { what: "an archive of garbage", parts: [["archive", new Uint8Array(4096).fill(0x50), "c.zip"], ["main", "main.circom"]], expected: { status: 400, code: "invalid_request" } },
  {
    what: "a tar.gz cut short",
    parts: [["archive", tarGz([{ path: "main.circom", content: MUL_SOURCE }]).subarray(0, 40), "c.tgz"], ["main", "main.circom"]],
    expected: { status: 400, code: "invalid_request" }
  },
  {
    what: "a zip escaping its folder",
    parts: [["archive", zip([{ path: "../main.circom", content: MUL_SOURCE }]), "c.zip"], ["main", "main.circom"]],
    expected: { status: 400, code: "invalid_request" }
  },
  {
    what: "a zip of a Noir project with a dependency",
    parts: [["archive", zip([{ path: "Nargo.toml", content: `${MANIFEST}[dependencies]\nx = { path = "../x" }\n` }, { path: "src/main.nr", content: MAIN_NR }]), "n.zip"]],
    expected: { build: "compile_error" }
  }
]

const upload = async (baseUrl: string, token: string, name: string, parts: ReadonlyArray<Part>) => {
  const form = new FormData()
  form.append("name", name)
  for (const [field, content, filename] of parts) {
    if (filename === undefined) form.append(field, typeof content === "string" ? content : new TextDecoder().decode(content))
    else form.append(field, new Blob([content]), filename)
  }
  const response = await fetch(`${baseUrl}/api/v1/circuits`, { method: "POST", body: form, headers: { authorization: `Bearer ${token}` } })
  return { status: response.status, json: await response.json() as Record<string, any> }
}

describe("hostile uploads to ./mzk serve", () => {
  it.scopedLive("every malformed program, source, artifact and archive fails alone; the process lives on and a good Noir program still builds", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("hostile")
      const database = `sqlite:${join(dir, "mzk.db")}`
      // --dev-ptau: circom sources and (a CRS made from it) Noir programs both build.
      const server = yield* serveProcess(database, { entry: "bundle", args: ["--dev-ptau", "--dev-ptau-dir", join(dir, "ptau"), "--build-timeout", "3m"] })
      const pid = server.child.pid!
      const { api_key: token } = createAccount(database, "Hostile", "bundle")
      const api = makeHttpClient(server.baseUrl, { token })
      const alive = () =>
        Effect.promise(async () => {
          expect(server.child.exitCode, server.output().slice(-3000)).toBeNull()
          expect(() => process.kill(pid, 0)).not.toThrow()
          expect((await fetch(`${server.baseUrl}/healthz`)).status).toBe(200)
        })

      // A case that fails says which it was and what the server printed last (a crash's stack).
      const named = <A>(what: string, effect: Effect.Effect<A>) =>
        Effect.catchAllDefect(effect, (defect) =>
          Effect.die(new Error(`${what}: ${String(defect)}\n--- the server printed, last:\n${server.output().slice(-4000)}`)))
      for (const [i, { what, parts, expected }] of CASES.entries()) yield* named(what, Effect.gen(function*() {
        const name = `hostile_${i}`
        const sent = yield* Effect.promise(() => upload(server.baseUrl, token, name, parts))
        if (sent.status === 202) {
          const settled = yield* Effect.promise(() => settle(api, `/api/v1/circuits/${name}`, (c) => c.status !== "compiling", 180_000))
          expect.soft({ status: 202, build: settled.error?.code }, `${what}: ${JSON.stringify(settled.error)}`).toEqual({ status: 202, build: "build" in expected ? expected.build : "(refused at upload)" })
          expect(settled.status, what).toBe("failed")
          expect(settled.error.message, what).not.toMatch(/\/tmp\/|node_modules|mzk-build-/)
        } else {
          expect.soft([sent.status, sent.json.error?.code], `${what}: ${JSON.stringify(sent.json)}`).toEqual("status" in expected ? [expected.status, expected.code] : [202, "(built)"])
          expect(JSON.stringify(sent.json), what).not.toMatch(/\/tmp\/|node_modules|mzk-build-/)
        }
        yield* alive()
      }))

      // The same process still builds and proves a good Noir program (through the bundle, whose
      // imports of the Noir packages once failed).
      const good = yield* Effect.promise(() => upload(server.baseUrl, token, "sum", [["noir_sources", MANIFEST, "Nargo.toml"], ["noir_sources", MAIN_NR, "src/main.nr"]]))
      expect(good.status).toBe(202)
      const ready = yield* Effect.promise(() => settle(api, "/api/v1/circuits/sum", (c) => c.status !== "compiling", 180_000))
      expect([ready.status, ready.error]).toEqual(["ready", null])
      const proof = yield* Effect.promise(() => api.send("POST", "/api/v1/proofs", { body: { type: "sum", inputs: { x: 3, y: 4 } } }))
      expect(proof.status).toBe(202)
      const done = yield* Effect.promise(() => settle(api, `/api/v1/proofs/${proof.json.proof_id}`, (p) => p.status === "completed" || p.status === "failed", 180_000))
      expect([done.status, done.public_inputs]).toEqual(["completed", { y: "4", return: "7" }])
      expect((yield* Effect.promise(() => api.send("GET", `/api/v1/proofs/${done.proof_id}/verify`))).json.valid).toBe(true)
      yield* alive()
    }), 900_000)
})
